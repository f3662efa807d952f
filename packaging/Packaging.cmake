# Install rules and CPack settings (Debian package). Included at the end of the top-level CMakeLists.txt, once
# every target exists. `cpack -G DEB` in a release build directory makes tessera_VERSION_ARCH.deb.
include(GNUInstallDirs)

set(TESSERA_RESOURCES "${CMAKE_SOURCE_DIR}/resources")
install(TARGETS tessera-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The cpu backend's worker process, found beside the programs that run kernels (runtime/cpu/cpu_worker.h).
install(TARGETS tessera-cpu-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET tessera)
  install(TARGETS tessera RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/samples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tessera/samples)
# Help ▸ Lessons reads them from share/tessera/lessons beside the program (ui/lessons/lesson.h); their models are the samples.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/lessons/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tessera/lessons)
# Debian keeps docs under the package name (lower case), not the project name.
set(TESSERA_DOCDIR ${CMAKE_INSTALL_DATADIR}/doc/tessera)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${TESSERA_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${TESSERA_DOCDIR})
# Desktop integration: launcher, icon, AppStream metadata, and the .tessera MIME type so session files open here.
install(FILES ${TESSERA_RESOURCES}/tessera.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications
        RENAME io.tessera.Tessera.desktop)
install(FILES ${TESSERA_RESOURCES}/tessera.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${TESSERA_RESOURCES}/io.tessera.Tessera.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${TESSERA_RESOURCES}/tessera-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
        RENAME tessera.xml)

set(CPACK_PACKAGE_NAME "tessera")
set(CPACK_PACKAGE_VENDOR "Tessera")
set(CPACK_PACKAGE_CONTACT "Tessera developers <tessera@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Desktop explorer for AI tensor compilers")
set(CPACK_PACKAGE_DESCRIPTION "Tessera imports ONNX and .tsr models and shows every compiler step: passes, fusion \
groups, kernel IR, schedules and generated CUDA/C++, with a command-line twin (tessera-cli).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Qt, protobuf, graphviz, NVRTC… found from the binaries with dpkg-shlibdeps
# What the backends need at run time that no binary links: the cpu backend runs the system's C++ compiler (with
# OpenMP, which g++ brings); the cuda backend opens NVIDIA's driver (libcuda.so.1) and NVRTC with dlopen. Without
# them the backend list and the compile errors say what is missing and what to install.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libcuda1")
if(TESSERA_HAVE_CUDA)  # NVRTC is opened at run time too (runtime/cuda/nvrtc_compiler.cpp), from NVIDIA's repository
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libcuda1, cuda-nvrtc-${CUDAToolkit_VERSION_MAJOR}-0")
endif()
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://tessera.example.org")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
include(CPack)

# The package test: cpack into a temporary folder, then dpkg-deb -c lists what the package installs.
add_test(NAME packaging_deb
         COMMAND bash ${CMAKE_SOURCE_DIR}/packaging/check_deb.sh ${CMAKE_BINARY_DIR} $<IF:$<TARGET_EXISTS:tessera>,gui,nogui>)
set_tests_properties(packaging_deb PROPERTIES LABELS packaging SKIP_RETURN_CODE 77 TIMEOUT 600)
