#pragma once
// Tokens of the .tsr form and a one-token-lookahead stream over them with positioned errors:
// "file:line:column: expected X, found Y". Line breaks are plain white space; '#' starts a comment.
#include <string>
#include <string_view>

namespace tessera::tsr {

enum class Tok {
  End,       // end of the text
  Name,      // bare name: graph, node, f32, MatMul, inf, _
  Number,    // -?digits(.digits)?(e[+-]?digits)? or -inf; the text as written
  String,    // "..." with escapes decoded
  ValueRef,  // %name or %"quoted name"; text is the name
  LBrace, RBrace, LParen, RParen, LBracket, RBracket, Comma, Colon, Equals, Less, Greater, Arrow
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  int line = 1;
  int column = 1;  // 1-based, in bytes
};

// The token as an error message shows it: 'node', '%x', string "abc", end of file.
std::string describe(const Token& token);

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& fileName);
  Token next();

 private:
  [[noreturn]] void errorHere(const std::string& message) const;
  char at(size_t offset = 0) const { return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0'; }
  bool atEnd() const { return pos_ >= text_.size(); }
  void advance(size_t n = 1);
  void skipBlanks();
  std::string readBareName();
  std::string readString();
  std::string readEscape();
  std::string readNumber();

  std::string_view text_;
  const std::string& fileName_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
};

class TokenStream {
 public:
  TokenStream(std::string_view text, const std::string& fileName);

  const Token& peek() const { return current_; }
  bool at(Tok kind) const { return current_.kind == kind; }
  bool atName(std::string_view name) const { return current_.kind == Tok::Name && current_.text == name; }
  Token take();
  // Takes the current token when it is `kind`.
  bool accept(Tok kind);
  // Takes a token of `kind`, or fails with "expected <what>, found <current>".
  Token expect(Tok kind, std::string_view what);
  // A node id, graph, op or attribute name: bare or quoted, not empty.
  Token expectName(std::string_view what);

  [[noreturn]] void failExpected(std::string_view what) const;
  [[noreturn]] void failAt(const Token& token, const std::string& message) const;
  [[noreturn]] void failAtLine(int line, const std::string& message) const;
  const std::string& fileName() const { return fileName_; }

 private:
  std::string fileName_;
  Lexer lexer_;
  Token current_;
};

}  // namespace tessera::tsr
