#include "runtime/cpu/shared_library.h"

#include <dlfcn.h>

#include <fstream>

#include "ir/error.h"
#include "runtime/cpu/temp_dir.h"

namespace tessera::cpu {

std::shared_ptr<SharedLibrary> SharedLibrary::open(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    fail("cannot load '" + path + "': " + (why ? why : "unknown dlopen error"));
  }
  return std::shared_ptr<SharedLibrary>(new SharedLibrary(handle, path));
}

std::shared_ptr<SharedLibrary> SharedLibrary::openImage(const std::string& image, const std::string& name) {
  TempDir dir("tessera-so-");
  std::string path = dir.file("lib" + name + ".so");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(image.data(), std::streamsize(image.size()));
    if (!out.flush()) fail("cannot write the shared object '" + name + "' in " + dir.path());
  }
  return open(path);  // the mapping outlives the file
}

SharedLibrary::~SharedLibrary() { dlclose(handle_); }

void* SharedLibrary::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (!address) fail("'" + name_ + "' has no symbol '" + name + "' (is it declared extern \"C\"?)");
  return address;
}

bool SharedLibrary::has(const std::string& name) const { return dlsym(handle_, name.c_str()) != nullptr; }

const std::string& pinOpenMpRuntime() {
  static const std::string status = [] {
    dlerror();
    // Deliberately never closed.
    if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE)) return std::string();
    const char* why = dlerror();
    return std::string("cannot load libgomp.so.1: ") + (why ? why : "unknown dlopen error");
  }();
  return status;
}

}  // namespace tessera::cpu
