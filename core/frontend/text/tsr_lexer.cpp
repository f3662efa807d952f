#include "frontend/text/tsr_lexer.h"

#include "frontend/text/tsr_syntax.h"
#include "ir/error.h"

namespace tessera::tsr {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }
int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string clip(const std::string& s) { return s.size() > 40 ? s.substr(0, 37) + "..." : s; }

std::string describeChar(bool atEnd, char c) {
  if (atEnd) return "end of file";
  if (c == '\n') return "end of line";
  return singleQuoted(showChar(c));
}

std::string_view punctText(Tok kind) {
  switch (kind) {
    case Tok::LBrace: return "{";
    case Tok::RBrace: return "}";
    case Tok::LParen: return "(";
    case Tok::RParen: return ")";
    case Tok::LBracket: return "[";
    case Tok::RBracket: return "]";
    case Tok::Comma: return ",";
    case Tok::Colon: return ":";
    case Tok::Equals: return "=";
    case Tok::Less: return "<";
    case Tok::Greater: return ">";
    case Tok::Arrow: return "->";
    default: return "";
  }
}

Tok punctKind(char c) {
  switch (c) {
    case '{': return Tok::LBrace;
    case '}': return Tok::RBrace;
    case '(': return Tok::LParen;
    case ')': return Tok::RParen;
    case '[': return Tok::LBracket;
    case ']': return Tok::RBracket;
    case ',': return Tok::Comma;
    case ':': return Tok::Colon;
    case '=': return Tok::Equals;
    case '<': return Tok::Less;
    case '>': return Tok::Greater;
    default: return Tok::End;
  }
}
}  // namespace

std::string describe(const Token& token) {
  switch (token.kind) {
    case Tok::End: return "end of file";
    case Tok::Name:
    case Tok::Number: return singleQuoted(clip(token.text));
    case Tok::String: return "string " + quoteString(clip(token.text));
    case Tok::ValueRef: return singleQuoted(clip(formatValueRef(token.text)));
    default: return singleQuoted(punctText(token.kind));
  }
}

// ---- Lexer ----

Lexer::Lexer(std::string_view text, const std::string& fileName) : text_(text), fileName_(fileName) {
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // a UTF-8 byte order mark, as some editors write
}

void Lexer::errorHere(const std::string& message) const {
  fail(fileName_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) + ": " + message);
}

void Lexer::advance(size_t n) {
  for (size_t k = 0; k < n && pos_ < text_.size(); ++k, ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
}

void Lexer::skipBlanks() {
  while (!atEnd()) {
    char c = at();
    if (c == '#') {
      while (!atEnd() && at() != '\n') advance();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      advance();
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skipBlanks();
  Token t;
  t.line = line_;
  t.column = column_;
  if (atEnd()) return t;
  char c = at();
  bool minusInf = c == '-' && text_.substr(pos_ + 1, 3) == "inf" && !isBareNameChar(at(4));
  if (c == '-' && at(1) == '>') {
    t.kind = Tok::Arrow;
    advance(2);
  } else if (isDigit(c) || (c == '-' && isDigit(at(1))) || minusInf) {
    t.kind = Tok::Number;
    t.text = readNumber();
  } else if (c == '%') {
    advance();
    t.kind = Tok::ValueRef;
    if (isBareNameChar(at()))
      t.text = readBareName();
    else if (at() == '"')
      t.text = readString();
    else
      errorHere("expected a value name after '%', found " + describeChar(atEnd(), at()));
  } else if (c == '"') {
    t.kind = Tok::String;
    t.text = readString();
  } else if (isBareNameStart(c)) {
    t.kind = Tok::Name;
    t.text = readBareName();
  } else if (punctKind(c) != Tok::End) {
    t.kind = punctKind(c);
    advance();
  } else {
    errorHere("unexpected character " + describeChar(false, c));
  }
  return t;
}

std::string Lexer::readBareName() {
  size_t start = pos_;
  while (!atEnd() && isBareNameChar(at())) advance();
  return std::string(text_.substr(start, pos_ - start));
}

std::string Lexer::readNumber() {
  size_t start = pos_;
  int line = line_, column = column_;
  if (at() == '-') advance();
  if (at() == 'i') {
    advance(3);  // inf, checked by the caller
  } else {
    while (isDigit(at())) advance();
    if (at() == '.' && isDigit(at(1))) {
      advance();
      while (isDigit(at())) advance();
    }
    bool exponent = (at() == 'e' || at() == 'E') &&
                    (isDigit(at(1)) || ((at(1) == '+' || at(1) == '-') && isDigit(at(2))));
    if (exponent) {
      advance(2);
      while (isDigit(at())) advance();
    }
  }
  if (!atEnd() && isBareNameChar(at())) {
    while (!atEnd() && isBareNameChar(at())) advance();
    fail(fileName_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": malformed number '" +
         clip(std::string(text_.substr(start, pos_ - start))) + "'");
  }
  return std::string(text_.substr(start, pos_ - start));
}

std::string Lexer::readString() {
  int line = line_, column = column_;
  advance();  // the opening quote
  std::string out;
  while (true) {
    if (atEnd() || at() == '\n')
      fail(fileName_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": unterminated string");
    char c = at();
    if (c == '"') break;
    if (c == '\\') {
      out += readEscape();
    } else {
      size_t start = pos_;  // copy a run of plain characters at once: base64 data can be long
      while (!atEnd() && at() != '"' && at() != '\\' && at() != '\n') ++pos_;
      column_ += int(pos_ - start);
      out.append(text_.substr(start, pos_ - start));
    }
  }
  advance();  // the closing quote
  return out;
}

std::string Lexer::readEscape() {
  char c = at(1);
  switch (c) {
    case '"': advance(2); return "\"";
    case '\\': advance(2); return "\\";
    case 'n': advance(2); return "\n";
    case 't': advance(2); return "\t";
    case 'r': advance(2); return "\r";
    case 'x':
      if (hexValue(at(2)) >= 0 && hexValue(at(3)) >= 0) {
        char v = char(hexValue(at(2)) * 16 + hexValue(at(3)));
        advance(4);
        return std::string(1, v);
      }
      errorHere("expected two hex digits after '\\x'");
    default:
      if (pos_ + 1 >= text_.size() || c == '\n') errorHere("unterminated string");
      errorHere("unknown escape '\\" + showChar(c) + "'");
  }
}

// ---- TokenStream ----

TokenStream::TokenStream(std::string_view text, const std::string& fileName)
    : fileName_(fileName), lexer_(text, fileName_) {
  current_ = lexer_.next();
}

Token TokenStream::take() {
  Token t = std::move(current_);
  current_ = lexer_.next();
  return t;
}

bool TokenStream::accept(Tok kind) {
  if (current_.kind != kind) return false;
  take();
  return true;
}

Token TokenStream::expect(Tok kind, std::string_view what) {
  if (current_.kind != kind) failExpected(what);
  return take();
}

Token TokenStream::expectName(std::string_view what) {
  if (current_.kind != Tok::Name && current_.kind != Tok::String) failExpected(what);
  if (current_.text.empty()) failAt(current_, std::string(what) + " must not be empty");
  return take();
}

void TokenStream::failExpected(std::string_view what) const {
  failAt(current_, "expected " + std::string(what) + ", found " + describe(current_));
}

void TokenStream::failAt(const Token& token, const std::string& message) const {
  fail(fileName_ + ":" + std::to_string(token.line) + ":" + std::to_string(token.column) + ": " + message);
}

void TokenStream::failAtLine(int line, const std::string& message) const {
  fail(fileName_ + ":" + std::to_string(line) + ": " + message);
}

}  // namespace tessera::tsr
