// tokenizer/spm.cpp — SentencePiece-style merging by piece score (see spm.h). Pairs are
// looked up by the keys of their two symbols in a table built once from the pieces, and
// merged through a priority queue (highest score, then leftmost), so a long input costs
// O(n log n).
#include "tokenizer/spm.h"

#include <queue>
#include <string>

#include "utf8/utf8.h"

namespace strata::tokenizer {
namespace {

bool mergeable(TokenType t) {
    return t == TokenType::Normal || t == TokenType::UserDefined || t == TokenType::Unused ||
           t == TokenType::Undefined;
}

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Whether U+2581 follows another character somewhere in `piece`.
bool space_inside(std::string_view piece) {
    for (size_t at = piece.find(kSpace, 1); at != std::string_view::npos; at = piece.find(kSpace, at + 1))
        if (at < 3 || piece.substr(at - 3, 3) != kSpace) return true;
    return false;
}

uint64_t pair_key(uint32_t left, uint32_t right) { return (uint64_t(left) << 32) | right; }

struct Symbol {
    size_t begin, len;
    uint32_t key;
    int32_t prev, next;
};

struct Bigram {
    float score;
    int32_t left, right;
    size_t len;  // of the merged text: a stale entry no longer matches its symbols
    int32_t piece;
};

struct BigramOrder {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

SpmModel::SpmModel(const Vocab& vocab) : vocab_(vocab) {
    for (int32_t id = 0; id < vocab.size(); ++id)
        if (mergeable(vocab.type[id]) && !vocab.text[id].empty()) pieces_.emplace(vocab.text[id], id);
    // Every way of writing a piece as two symbols becomes a pair entry. That costs the square
    // of a piece's length, so pieces longer than any real vocabulary has are left out (they
    // are never built by merging; their texts still tokenize, piece by piece).
    constexpr size_t kLongestMergedPiece = 1024;
    for (const auto& [text, id] : pieces_) {
        if (space_inside(text)) words_are_independent_ = false;
        if (text.size() > kLongestMergedPiece) continue;
        size_t len = 0;
        for (size_t split = 0; split < text.size(); split += len) {
            char_key(text, split, &len);
            if (split == 0) continue;
            uint32_t left = symbol_key(text.substr(0, split));
            uint32_t right = symbol_key(text.substr(split));
            if (left != UINT32_MAX && right != UINT32_MAX) pair_to_piece_.emplace(pair_key(left, right), id);
        }
    }
    for (int b = 0; b < 256; ++b) {
        const char byte = static_cast<char>(b);
        int32_t id = vocab.find("<0x" + hex_byte(byte) + ">");
        byte_token_[b] = id >= 0 ? id : vocab.find(std::string_view(&byte, 1));
    }
}

uint32_t SpmModel::char_key(std::string_view text, size_t pos, size_t* len) const {
    *len = utf8::valid_length(text, pos);
    if (*len == 0) {
        *len = 1;
        return kByteKey | static_cast<uint8_t>(text[pos]);
    }
    return kCharKey | utf8::decode(text, pos, *len);
}

// The key of `s` as a symbol: its piece id, a single character's key, or UINT32_MAX when
// no symbol can ever hold this text.
uint32_t SpmModel::symbol_key(std::string_view s) const {
    if (auto it = pieces_.find(s); it != pieces_.end()) return static_cast<uint32_t>(it->second);
    size_t len = 0;
    uint32_t key = char_key(s, 0, &len);
    return len == s.size() ? key : UINT32_MAX;
}

void SpmModel::append_bytes(std::string_view bytes, std::vector<int32_t>& out) const {
    for (char c : bytes) {
        int32_t id = byte_token_[static_cast<uint8_t>(c)];
        if (id < 0) id = vocab_.unk;
        if (id < 0)
            throw TokenizerError("cannot tokenize byte 0x" + hex_byte(c) +
                                 ": the vocabulary has no byte token for it and no unknown token");
        out.push_back(id);
    }
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
    if (!words_are_independent_) return encode_chunk(text, out);
    // Words start at a U+2581 that follows another character.
    size_t start = 0;
    for (size_t at = text.find(kSpace, 1); at != std::string_view::npos; at = text.find(kSpace, at + 1)) {
        if (at >= 3 && text.substr(at - 3, 3) == kSpace) continue;
        encode_chunk(text.substr(start, at - start), out);
        start = at;
    }
    encode_chunk(text.substr(start), out);
}

void SpmModel::encode_chunk(std::string_view text, std::vector<int32_t>& out) const {
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t pos = 0, len = 0; pos < text.size(); pos += len) {
        uint32_t key = char_key(text, pos, &len);
        if (auto it = pieces_.find(text.substr(pos, len)); it != pieces_.end()) key = static_cast<uint32_t>(it->second);
        int32_t index = static_cast<int32_t>(symbols.size());
        symbols.push_back({pos, len, key, index - 1, -1});
        if (index > 0) symbols[index - 1].next = index;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    auto try_pair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        auto it = pair_to_piece_.find(pair_key(symbols[left].key, symbols[right].key));
        if (it == pair_to_piece_.end()) return;
        queue.push({vocab_.score[it->second], left, right, symbols[left].len + symbols[right].len, it->second});
    };
    for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        Bigram b = queue.top();
        queue.pop();
        Symbol& left = symbols[b.left];
        Symbol& right = symbols[b.right];
        if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
        left.len += right.len;
        left.key = static_cast<uint32_t>(b.piece);
        right.len = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        try_pair(left.prev, b.left);
        try_pair(b.left, left.next);
    }

    for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
        const Symbol& s = symbols[i];
        if (s.key < kCharKey) out.push_back(static_cast<int32_t>(s.key));
        else append_bytes(text.substr(s.begin, s.len), out);
    }
}

}  // namespace strata::tokenizer
