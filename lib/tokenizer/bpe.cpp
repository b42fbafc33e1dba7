// tokenizer/bpe.cpp — byte-level BPE (see bpe.h). Merges are looked up by the pair of
// symbol ids, and applied through a priority queue (lowest rank, then leftmost), so that
// even a megabyte-long word costs O(n log n).
#include "tokenizer/bpe.h"

#include <queue>

#include "tokenizer/byte_level.h"
#include "utf8/utf8.h"

namespace strata::tokenizer {
namespace {

uint64_t pair_key(int32_t left, int32_t right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

struct Candidate {
    int32_t rank;
    int32_t left, right;  // symbol positions
    int32_t left_symbol, right_symbol;
    int32_t result;
};

struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

}  // namespace

BpeModel::BpeModel(const Vocab& vocab, bool ignore_merges) : vocab_(vocab), ignore_merges_(ignore_merges) {
    if (ignore_merges)
        for (int32_t id = 0; id < vocab.size(); ++id)
            if (vocab.type[id] == TokenType::Normal && byte_level::decode(vocab.text[id]))
                by_bytes_.emplace(vocab.piece[id], id);
    for (int b = 0; b < 256; ++b) {
        std::string text;
        utf8::append(text, byte_level::byte_to_code_point(static_cast<uint8_t>(b)));
        byte_symbol_[b] = symbol_of(text);
    }
    // Merges name their parts in the vocabulary's byte alphabet, as token texts do.
    merges_.reserve(vocab.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        std::string_view merge = vocab.merges[rank];
        size_t space = merge.find(' ', 1);
        joined.assign(merge.substr(0, space)).append(merge.substr(space + 1));
        int32_t left = symbol_of(merge.substr(0, space)), right = symbol_of(merge.substr(space + 1));
        if (left < 0 || right < 0) continue;  // a part that stands for no bytes: never applies
        merges_.emplace(pair_key(left, right), Merge{static_cast<int32_t>(rank), symbol_of(joined)});  // first rank wins
    }
}

int32_t BpeModel::symbol_of(std::string_view text) {
    int32_t id = vocab_.find(text);
    if (id >= 0 && vocab_.type[id] == TokenType::Normal) return id;
    if (auto it = extra_symbols_.find(text); it != extra_symbols_.end()) return it->second;
    auto bytes = byte_level::decode(text);
    if (!bytes || bytes->empty()) return -1;
    int32_t symbol = vocab_.size() + static_cast<int32_t>(extra_bytes_.size());
    extra_symbols_.emplace(text, symbol);
    extra_bytes_.push_back(std::move(*bytes));
    return symbol;
}

void BpeModel::append_symbol(int32_t symbol, std::vector<int32_t>& out) const {
    if (symbol < vocab_.size()) {
        out.push_back(symbol);
        return;
    }
    // Bytes that merges built but that are no token: one token per byte.
    for (char c : extra_bytes_[symbol - vocab_.size()]) {
        int32_t id = byte_symbol_[static_cast<uint8_t>(c)];
        if (id >= vocab_.size()) id = vocab_.unk;
        if (id < 0)
            throw TokenizerError("cannot tokenize byte 0x" + hex_byte(c) +
                                 ": the vocabulary has no token for it and no unknown token");
        out.push_back(id);
    }
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
    if (word.empty()) return;
    if (ignore_merges_) {
        if (auto it = by_bytes_.find(word); it != by_bytes_.end()) {
            out.push_back(it->second);
            return;
        }
    }
    struct Link {
        int32_t symbol, prev, next;
    };
    const int32_t n = static_cast<int32_t>(word.size());
    std::vector<Link> links(n);
    for (int32_t i = 0; i < n; ++i) links[i] = {byte_symbol_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};

    std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
    auto try_pair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        auto it = merges_.find(pair_key(links[left].symbol, links[right].symbol));
        if (it != merges_.end())
            queue.push({it->second.rank, left, right, links[left].symbol, links[right].symbol, it->second.result});
    };
    for (int32_t i = 0; i + 1 < n; ++i) try_pair(i, i + 1);

    while (!queue.empty()) {
        Candidate c = queue.top();
        queue.pop();
        Link& left = links[c.left];
        Link& right = links[c.right];
        // Stale when either side has been merged since the candidate was queued.
        if (left.symbol != c.left_symbol || left.next != c.right || right.symbol != c.right_symbol) continue;
        left.symbol = c.result;
        right.symbol = -1;
        left.next = right.next;
        if (left.next >= 0) links[left.next].prev = c.left;
        try_pair(left.prev, c.left);
        try_pair(c.left, left.next);
    }
    for (int32_t i = 0; i >= 0; i = links[i].next) append_symbol(links[i].symbol, out);
}

}  // namespace strata::tokenizer
