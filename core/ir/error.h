#pragma once
// The one exception type of the core. Messages name the file, node or value at fault;
// the CLI prints them on one line and exits 2, the window shows them.
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& message) { throw Error(message); }

}  // namespace tessera
