// grammar/grammar.h — GBNF-like grammars: the rule set and its one parser.
// Owns: parsing grammar text into rules of alternatives of symbols (rule references and
// code-point classes), rewriting groups and repetition (* + ? {m,n}) into generated rules,
// and refusing grammars the automaton cannot run (undefined rules, left recursion).
// Must not touch: tokens or logits (automaton.h does the matching).
//
// Syntax (see strata-protocol(7), "Grammars"):
//   name ::= alternatives          one rule; a rule ends where the next "name ::=" starts
//   a b c                          sequence;  a | b   alternatives;  ( ... )  group
//   "text"                         literal (escapes \n \r \t \\ \" \] \xHH \uHHHH \UHHHHHHHH)
//   [a-z0-9_] [^"\\]               code-point class, ranges, negation;  .  any code point
//   x*  x+  x?  x{m}  x{m,}  x{m,n} repetition
//   # comment                      to the end of the line
// The start rule is "root".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::grammar {

// A grammar that cannot be parsed or run; the message names the line and column or rule.
class GrammarError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CharClass {
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // inclusive code-point ranges
    bool negated = false;

    bool matches(uint32_t cp) const;
    // Whether some code point in [lo, hi] matches.
    bool may_match(uint32_t lo, uint32_t hi) const;
};

struct Symbol {
    bool is_rule;    // a reference to rules[index], else classes[index]
    uint32_t index;
};
using Alternative = std::vector<Symbol>;

struct Rule {
    std::string name;
    std::vector<Alternative> alts;
};

struct Grammar {
    std::vector<Rule> rules;
    std::vector<CharClass> classes;
    uint32_t root = 0;

    // Throws GrammarError naming the line and column of a syntax error, an undefined rule,
    // a missing root, or a left-recursive rule.
    static Grammar parse(std::string_view text);
};

}  // namespace strata::grammar
