// Session branches: the active one lives in the session's top-level fields, the others beside it in order.
#include <algorithm>
#include <set>

#include "ir/error.h"
#include "session/session.h"

namespace tessera {
namespace {

std::string listOf(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

SessionBranch activeBranch(const Session& s) {
  SessionBranch b;
  static_cast<BranchState&>(b) = s;
  b.name = s.branch;
  return b;
}

void setActiveBranch(Session& s, SessionBranch b) {
  s.branch = std::move(b.name);
  static_cast<BranchState&>(s) = std::move(b);
}

std::vector<SessionBranch> allBranches(const Session& s) {
  std::vector<SessionBranch> all = s.otherBranches;
  all.insert(all.begin() + std::ptrdiff_t(std::min(s.activeIndex, all.size())), activeBranch(s));
  return all;
}

std::vector<std::string> branchNames(const Session& s) {
  std::vector<std::string> names;
  for (const SessionBranch& b : allBranches(s)) names.push_back(b.name);
  return names;
}

void setBranches(Session& s, std::vector<SessionBranch> branches, const std::string& active) {
  std::set<std::string> seen;
  for (const SessionBranch& b : branches) {
    if (b.name.empty()) fail("a session branch needs a name");
    if (!seen.insert(b.name).second) fail("two session branches are named '" + b.name + "'");
  }
  auto it = std::find_if(branches.begin(), branches.end(), [&](const SessionBranch& b) { return b.name == active; });
  if (it == branches.end()) fail("no branch '" + active + "' among the session's branches");
  s.activeIndex = size_t(it - branches.begin());
  setActiveBranch(s, std::move(*it));
  branches.erase(it);
  s.otherBranches = std::move(branches);
}

void switchBranch(Session& s, const std::string& name) {
  if (name == s.branch) return;
  std::vector<SessionBranch> all = allBranches(s);
  if (std::none_of(all.begin(), all.end(), [&](const SessionBranch& b) { return b.name == name; }))
    fail("no branch '" + name + "' in the session (branches: " + listOf(branchNames(s)) + ")");
  setBranches(s, std::move(all), name);
}

bool isSessionPath(const std::string& path) {
  std::string p = path;
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const std::string ext = ".tessera";
  for (size_t at = p.find(ext); at != std::string::npos; at = p.find(ext, at + 1)) {
    const size_t end = at + ext.size();
    if (end == p.size() || p[end] == '#') return true;
  }
  return false;
}

SessionRef parseSessionRef(const std::string& ref) {
  std::string lower = ref;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const size_t at = lower.rfind(".tessera#");
  if (at == std::string::npos) return {ref, {}};
  const size_t hash = at + std::string(".tessera").size();
  return {ref.substr(0, hash), ref.substr(hash + 1)};
}

Session loadSessionRef(const std::string& ref) {
  const SessionRef r = parseSessionRef(ref);
  Session s = loadSession(r.path);
  if (r.branch.empty()) return s;
  try {
    switchBranch(s, r.branch);
  } catch (const Error& e) {
    fail(r.path + ": " + e.what());
  }
  return s;
}

}  // namespace tessera
