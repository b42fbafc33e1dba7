// grammar/automaton.cpp — the pushdown matcher over bytes and the trie walk that masks tokens.
#include "grammar/automaton.h"

#include <algorithm>
#include <deque>
#include <map>

namespace strata::grammar {

namespace {

void add_unique(std::vector<Stack>& out, Stack stack) {
    if (std::find(out.begin(), out.end(), stack) == out.end()) out.push_back(std::move(stack));
}

// Pushes onto out every stack reachable from stack without reading a character: each has a
// class on top, or is empty (the root is complete). Terminates because the parser refused
// left recursion.
void expand(const Grammar& g, Stack stack, std::vector<Stack>& out) {
    while (!stack.empty()) {
        const Pos top = stack.back();
        const Alternative& alt = g.rules[top.rule].alts[top.alt];
        if (top.sym == alt.size()) {
            stack.pop_back();
            continue;
        }
        const Symbol s = alt[top.sym];
        if (!s.is_rule) break;
        // Return past the reference; drop the frame when nothing follows it (tail call).
        if (++stack.back().sym == alt.size()) stack.pop_back();
        const auto& alts = g.rules[s.index].alts;
        for (uint32_t a = 0; a < alts.size(); ++a) {
            Stack next = stack;
            next.push_back(Pos{s.index, a, 0});
            expand(g, std::move(next), out);
        }
        return;
    }
    add_unique(out, std::move(stack));
}

const CharClass& top_class(const Grammar& g, const Stack& stack) {
    const Pos& top = stack.back();
    return g.classes[g.rules[top.rule].alts[top.alt][top.sym].index];
}

}  // namespace

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes) : n_vocab_(token_bytes.size()) {
    struct Build {
        std::map<uint8_t, uint32_t> children;
        int32_t token = -1;
    };
    std::vector<Build> tmp(1);
    for (size_t id = 0; id < token_bytes.size(); ++id) {
        if (token_bytes[id].empty()) continue;
        uint32_t n = 0;
        for (char c : token_bytes[id]) {
            auto b = static_cast<uint8_t>(c);
            auto it = tmp[n].children.find(b);
            if (it == tmp[n].children.end()) {
                tmp.push_back({});
                it = tmp[n].children.emplace(b, static_cast<uint32_t>(tmp.size() - 1)).first;
            }
            n = it->second;
        }
        if (tmp[n].token < 0) {
            tmp[n].token = static_cast<int32_t>(id);
        } else {
            aliases_.emplace_back(static_cast<int32_t>(id), tmp[n].token);
        }
    }
    // Flatten breadth-first so each node's children are contiguous.
    nodes_.resize(tmp.size());
    std::deque<std::pair<uint32_t, uint32_t>> queue{{0, 0}};  // (tmp index, nodes_ index)
    uint32_t next = 1;
    while (!queue.empty()) {
        auto [t, n] = queue.front();
        queue.pop_front();
        nodes_[n].token = tmp[t].token;
        nodes_[n].first_child = next;
        nodes_[n].n_children = static_cast<uint32_t>(tmp[t].children.size());
        for (auto [b, child] : tmp[t].children) {
            nodes_[next].byte = b;
            queue.emplace_back(child, next++);
        }
    }
}

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : g_(std::move(grammar)) {
    for (uint32_t a = 0; a < g_->rules[g_->root].alts.size(); ++a) {
        expand(*g_, Stack{Pos{g_->root, a, 0}}, stacks_);
    }
}

bool Matcher::can_end() const {
    return remaining_ == 0 &&
           std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

void Matcher::advance_codepoint(uint32_t cp) {
    std::vector<Stack> next;
    for (const Stack& s : stacks_) {
        if (s.empty() || !top_class(*g_, s).matches(cp)) continue;
        Stack moved = s;
        ++moved.back().sym;
        expand(*g_, std::move(moved), next);
    }
    stacks_ = std::move(next);
}

bool Matcher::step(uint8_t byte) {
    if (remaining_ == 0) {
        if (byte < 0x80) {
            advance_codepoint(byte);
            return !stacks_.empty();
        }
        uint32_t n = (byte >> 5) == 6 ? 1 : (byte >> 4) == 14 ? 2 : (byte >> 3) == 30 ? 3 : 0;
        if (n == 0) {
            stacks_.clear();
            return false;
        }
        partial_ = byte & (0x3Fu >> n);
        remaining_ = n;
        min_cp_ = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;  // shorter forms are overlong
    } else {
        if ((byte >> 6) != 2) {
            stacks_.clear();
            return false;
        }
        partial_ = (partial_ << 6) | (byte & 0x3Fu);
        if (--remaining_ == 0) {
            if (partial_ < min_cp_ || partial_ > 0x10FFFF) {
                stacks_.clear();
                return false;
            }
            advance_codepoint(partial_);
            return !stacks_.empty();
        }
    }
    // A code point still incomplete: keep the stacks whose class admits some completion.
    const uint32_t shift = 6 * remaining_;
    const uint32_t lo = std::max(partial_ << shift, min_cp_);
    const uint32_t hi = std::min((partial_ << shift) | ((1u << shift) - 1), 0x10FFFFu);
    if (lo > hi) {
        stacks_.clear();
        return false;
    }
    std::erase_if(stacks_, [&](const Stack& s) { return s.empty() || !top_class(*g_, s).may_match(lo, hi); });
    return !stacks_.empty();
}

bool Matcher::accept_bytes(std::string_view bytes) {
    Matcher next = *this;
    for (char c : bytes) {
        if (!next.step(static_cast<uint8_t>(c))) return false;
    }
    *this = std::move(next);
    return true;
}

void Matcher::walk(const TokenTrie& trie, uint32_t node, std::vector<uint8_t>& allowed) const {
    const auto& n = trie.nodes()[node];
    for (uint32_t c = n.first_child; c < n.first_child + n.n_children; ++c) {
        Matcher next = *this;
        if (!next.step(trie.nodes()[c].byte)) continue;
        if (trie.nodes()[c].token >= 0) allowed[static_cast<size_t>(trie.nodes()[c].token)] = 1;
        next.walk(trie, c, allowed);
    }
}

void Matcher::allowed_tokens(const TokenTrie& trie, std::vector<uint8_t>& allowed) const {
    allowed.assign(trie.n_vocab(), 0);
    walk(trie, 0, allowed);
    for (auto [tok, same] : trie.aliases()) allowed[static_cast<size_t>(tok)] = allowed[static_cast<size_t>(same)];
}

}  // namespace strata::grammar
