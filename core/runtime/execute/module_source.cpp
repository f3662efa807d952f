#include "runtime/execute/module_source.h"

#include <map>

#include "runtime/execute/fault_hook.h"

namespace tessera::execute::detail {

namespace {

bool identifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Copies a string or character literal starting at text[i] (its quote) to `out`; returns the index after it.
size_t copyLiteral(const std::string& text, size_t i, std::string& out) {
  char quote = text[i];
  out += text[i++];
  while (i < text.size() && text[i] != quote && text[i] != '\n') {
    if (text[i] == '\\' && i + 1 < text.size()) out += text[i++];
    out += text[i++];
  }
  if (i < text.size()) out += text[i++];
  return i;
}

// `text` with // and /* */ comments removed; the newlines inside them stay. Literals are copied as they are.
std::string withoutComments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '"' || text[i] == '\'') {
      i = copyLiteral(text, i, out);
    } else if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? text.size() : end + 2;
      for (; i < end; ++i)
        if (text[i] == '\n') out += '\n';
      out += ' ';  // a comment separates tokens
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Whether text[at...] is `suffix` and then no identifier character.
bool suffixAt(const std::string& text, size_t at, const std::string& suffix) {
  size_t end = at + suffix.size();
  return text.compare(at, suffix.size(), suffix) == 0 && (end == text.size() || !identifierChar(text[end]));
}

}  // namespace

std::string renamed(const std::string& text, const std::string& name, const std::string& to) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + name.size())) {
    size_t end = at + name.size();
    bool starts = at == 0 || !identifierChar(text[at - 1]);
    bool ends = end == text.size() || !identifierChar(text[end]) || suffixAt(text, end, "_call") ||
                suffixAt(text, end, "_region");
    if (!starts || !ends) continue;
    out.append(text, from, at - from).append(to);
    from = end;
  }
  return out.append(text, from, std::string::npos);
}

std::string moduleSource(const codegen::GeneratedKernel& k) {
  return renamed(withoutComments(k.source), k.entry, kModuleEntry);
}

std::string modulePrelude(const codegen::GeneratedKernel& k) { return withoutComments(k.prelude); }

std::vector<size_t> moduleOwners(const std::vector<const codegen::GeneratedKernel*>& kernels, codegen::Target target,
                                 std::vector<std::string>& sources) {
  std::vector<size_t> owners(kernels.size(), kNoModule);
  sources.assign(kernels.size(), "");
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i]) continue;
    sources[i] = withTestFault(moduleSource(*kernels[i]), *kernels[i], target);
    owners[i] = first.emplace(sources[i], i).first->second;
  }
  return owners;
}

void shareBuilds(const std::vector<size_t>& owners, std::vector<KernelBuild>& builds) {
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i] == kNoModule || owners[i] == i) continue;
    builds[i] = builds[owners[i]];
    builds[i].compileMs = 0;
    builds[i].warning.clear();  // said once, by the kernel that built it
  }
}

}  // namespace tessera::execute::detail
