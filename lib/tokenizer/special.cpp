// tokenizer/special.cpp — special-token matching with a byte trie (see special.h).
#include "tokenizer/special.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace strata::tokenizer {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

SpecialMatcher::SpecialMatcher(const Vocab& vocab) : vocab_(vocab), nodes_(1), rank_(vocab.text.size(), -1) {
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < vocab.size(); ++id)
        if (is_special(vocab.type[id]) && !vocab.text[id].empty()) ids.push_back(id);
    // Longer texts claim the input first; ties go to the lower id.
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int32_t a, int32_t b) { return vocab.text[a].size() > vocab.text[b].size(); });
    for (size_t r = 0; r < ids.size(); ++r) {
        rank_[ids[r]] = static_cast<int32_t>(r);
        add(vocab.text[ids[r]], ids[r]);
        has_user_defined_ |= vocab.type[ids[r]] == TokenType::UserDefined;
    }
    has_any_ = !ids.empty();
}

int32_t SpecialMatcher::child(int32_t node, uint8_t byte) const {
    const auto& next = nodes_[node].next;
    auto it = std::lower_bound(next.begin(), next.end(), std::pair<uint8_t, int32_t>(byte, -1));
    return it != next.end() && it->first == byte ? it->second : -1;
}

void SpecialMatcher::add(std::string_view text, int32_t token) {
    int32_t node = 0;
    for (char c : text) {
        auto byte = static_cast<uint8_t>(c);
        int32_t next = child(node, byte);
        if (next < 0) {
            next = static_cast<int32_t>(nodes_.size());
            nodes_.emplace_back();
            auto& edges = nodes_[node].next;
            edges.insert(std::lower_bound(edges.begin(), edges.end(), std::pair<uint8_t, int32_t>(byte, -1)),
                         {byte, next});
        }
        node = next;
    }
    nodes_[node].token = token;
}

std::vector<int32_t> SpecialMatcher::present(std::string_view text, bool parse_special) const {
    std::vector<uint8_t> seen(rank_.size(), 0);
    std::vector<int32_t> tokens;
    for (size_t pos = 0; pos < text.size(); ++pos) {
        int32_t node = 0;
        for (size_t i = pos; i < text.size(); ++i) {
            node = child(node, static_cast<uint8_t>(text[i]));
            if (node < 0) break;
            int32_t token = nodes_[node].token;
            if (token >= 0 && !seen[token] && (parse_special || vocab_.type[token] == TokenType::UserDefined)) {
                seen[token] = 1;
                tokens.push_back(token);
            }
        }
    }
    std::sort(tokens.begin(), tokens.end(), [&](int32_t a, int32_t b) { return rank_[a] < rank_[b]; });
    return tokens;
}

std::vector<Fragment> SpecialMatcher::partition(std::string_view text, bool parse_special) const {
    if (text.empty()) return {};
    if (!has_any_ || (!parse_special && !has_user_defined_)) return {{text}};

    // Tokens claim text in rank order, each its occurrences from left to right where the
    // text is still unclaimed (llama.cpp's repeated leftmost search, fragment by fragment).
    std::vector<uint8_t> claimed(text.size(), 0);
    std::vector<Occurrence> accepted;
    for (int32_t token : present(text, parse_special)) {
        std::string_view t = vocab_.text[token];
        for (size_t pos = text.find(t); pos != std::string_view::npos;) {
            auto first = claimed.begin() + static_cast<ptrdiff_t>(pos), last = first + static_cast<ptrdiff_t>(t.size());
            bool free = std::none_of(first, last, [](uint8_t c) { return c != 0; });
            if (free) {
                std::fill(first, last, 1);
                accepted.push_back({pos, token});
            }
            pos = text.find(t, pos + (free ? t.size() : 1));
        }
    }
    std::sort(accepted.begin(), accepted.end(), [](const Occurrence& a, const Occurrence& b) { return a.pos < b.pos; });

    std::vector<Fragment> out;
    size_t start = 0;
    auto add_text = [&](size_t begin, size_t end, bool strip_left_space, bool strip_right_space) {
        while (strip_left_space && begin < end && is_space(text[begin])) ++begin;
        while (strip_right_space && end > begin && is_space(text[end - 1])) --end;
        if (end > begin) out.push_back({text.substr(begin, end - begin)});
    };
    int32_t previous = -1;
    for (const Occurrence& o : accepted) {
        bool after_strip = previous >= 0 && (vocab_.strip[previous] & Vocab::kStripRight);
        add_text(start, o.pos, after_strip, vocab_.strip[o.token] & Vocab::kStripLeft);
        out.push_back({{}, o.token});
        start = o.pos + vocab_.text[o.token].size();
        previous = o.token;
    }
    add_text(start, text.size(), previous >= 0 && (vocab_.strip[previous] & Vocab::kStripRight), false);
    return out;
}

}  // namespace strata::tokenizer
