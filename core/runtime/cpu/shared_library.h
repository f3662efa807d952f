#pragma once
// A shared object opened with dlopen and closed with dlclose when the last owner lets go.
#include <memory>
#include <string>

namespace tessera::cpu {

class SharedLibrary {
 public:
  // RTLD_NOW | RTLD_LOCAL; throws tessera::Error with dlerror()'s text when it cannot be loaded.
  static std::shared_ptr<SharedLibrary> open(const std::string& path);
  // Loads a shared object from its bytes (a module cache's image): written into a private temporary folder,
  // opened, and the folder removed. `name` (letters, digits, '_') names it in messages; throws like open().
  static std::shared_ptr<SharedLibrary> openImage(const std::string& image, const std::string& name);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of an `extern "C"` symbol; throws naming the symbol when it is absent.
  void* symbol(const std::string& name) const;
  // Whether it has that symbol (a marker the generator may or may not have written).
  bool has(const std::string& name) const;
  template <class Fn>
  Fn* function(const std::string& name) const {
    return reinterpret_cast<Fn*>(symbol(name));
  }
  const std::string& name() const { return name_; }

 private:
  SharedLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_;
  std::string name_;
};

// Loads the GNU OpenMP runtime once, for good (RTLD_NODELETE), so that closing a kernel built with -fopenmp never
// unloads libgomp while its worker threads are still parked in it. Returns "" or why it could not be loaded.
const std::string& pinOpenMpRuntime();

}  // namespace tessera::cpu
