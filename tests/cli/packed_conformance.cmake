# Runs `tessera-cli conformance` over the packed ONNX node suite (cmake -P, from CTest).
#   -DCLI=tessera-cli -DTARBALL=node-tests.tar.xz -DUNPACK_DIR=dir -DKNOWN=known-failures.txt -DMIN_PASSED=N
#   -DBACKEND=reference|cpu
# Unpacks the tarball into UNPACK_DIR once (again when the tarball changes), runs every test folder in it, and
# fails when a test fails or skips outside the known-failures list, or when fewer than MIN_PASSED pass (so that an
# empty or half-unpacked folder, or a CLI that finds no tests, cannot pass by testing nothing).
cmake_minimum_required(VERSION 3.18)  # file(ARCHIVE_EXTRACT), IN_LIST
foreach(var CLI TARBALL UNPACK_DIR KNOWN MIN_PASSED BACKEND)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "packed_conformance.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${TARBALL}")
  message("skipped: no packed ONNX node tests at ${TARBALL}")
  return()
endif()

file(SHA256 "${TARBALL}" tarball_hash)
set(stamp "${UNPACK_DIR}/.unpacked-${tarball_hash}")
if(NOT EXISTS "${stamp}")
  file(REMOVE_RECURSE "${UNPACK_DIR}")
  file(MAKE_DIRECTORY "${UNPACK_DIR}")
  file(ARCHIVE_EXTRACT INPUT "${TARBALL}" DESTINATION "${UNPACK_DIR}")
  file(TOUCH "${stamp}")
endif()

execute_process(COMMAND "${CLI}" conformance --backend "${BACKEND}" "${UNPACK_DIR}" --known-failures "${KNOWN}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT out MATCHES "\n([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped")
  message(FATAL_ERROR "no summary line from tessera-cli conformance (exit ${rc})")
endif()
set(passed ${CMAKE_MATCH_1})
if(passed LESS MIN_PASSED)
  message(FATAL_ERROR "${passed} tests passed, below the floor of ${MIN_PASSED}")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-cli conformance exited ${rc}: a failure or skip outside ${KNOWN}")
endif()
# Entries of the list that now pass: reported, so that the list is trimmed when an op is added.
file(STRINGS "${KNOWN}" known_lines REGEX "^test_")
string(REGEX MATCHALL "pass [A-Za-z0-9_]+" pass_lines "${out}")
string(REPLACE "pass " "" passing "${pass_lines}")
set(stale "")
foreach(line IN LISTS known_lines)
  string(REGEX REPLACE "[ \t].*" "" name "${line}")
  if(name IN_LIST passing)
    list(APPEND stale "${name}")
  endif()
endforeach()
if(stale)
  list(LENGTH stale n)
  message(WARNING "${n} tests in ${KNOWN} now pass; remove them: ${stale}")
endif()
message("${passed} passed (floor ${MIN_PASSED})")
