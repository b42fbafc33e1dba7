// client/strata-gguf/import_binary.cpp — the non-JSON tokenizer files: SentencePiece's
// tokenizer.model (a protobuf, of which the few fields needed are read here with bounds
// checks), tiktoken rank files (merges re-derived from the ranks), and llama2.c /
// Gemma.c tokenizer.bin.
#include <cstring>
#include <unordered_map>

#include "import_common.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/vocab.h"

namespace strata::tool {
namespace {

// A protobuf message: a sequence of (field number, wire type, value).
class ProtoReader {
public:
    ProtoReader(std::string_view data, const std::string& path) : data_(data), path_(path) {}
    bool done() const { return pos_ >= data_.size(); }

    struct Field {
        uint32_t number;
        uint32_t wire_type;
        uint64_t varint = 0;        // wire types 0, 1 and 5
        std::string_view bytes;     // wire type 2
    };

    Field next() {
        uint64_t key = varint();
        Field f{static_cast<uint32_t>(key >> 3), static_cast<uint32_t>(key & 7)};
        switch (f.wire_type) {
            case 0: f.varint = varint(); break;
            case 1: f.varint = fixed(8); break;
            case 5: f.varint = fixed(4); break;
            case 2: {
                uint64_t len = varint();
                if (len > data_.size() - pos_) fail(path_, "a protobuf field runs past the end of the file");
                f.bytes = data_.substr(pos_, len);
                pos_ += len;
                break;
            }
            default: fail(path_, "protobuf wire type " + std::to_string(f.wire_type) + " is not supported");
        }
        return f;
    }

private:
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ >= data_.size()) fail(path_, "a protobuf varint runs past the end of the file");
            auto b = static_cast<uint8_t>(data_[pos_++]);
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail(path_, "a protobuf varint is too long");
    }
    uint64_t fixed(size_t n) {
        if (n > data_.size() - pos_) fail(path_, "a protobuf field runs past the end of the file");
        uint64_t v = 0;
        std::memcpy(&v, data_.data() + pos_, n);  // little-endian, as the host
        pos_ += n;
        return v;
    }

    std::string_view data_;
    const std::string& path_;
    size_t pos_ = 0;
};

float as_float(uint64_t bits) {
    auto b32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b32, sizeof f);
    return f;
}

// SentencePiece piece types, numbered as GGUF token types except that 0 means "unset".
TokenType piece_type(uint64_t type) {
    return type >= 1 && type <= 6 ? static_cast<TokenType>(type) : TokenType::Normal;
}

void read_piece(std::string_view message, const std::string& path, TokenizerSpec& spec) {
    std::string text;
    float score = 0.0f;
    uint64_t type = 1;
    ProtoReader r(message, path);
    while (!r.done()) {
        auto f = r.next();
        if (f.number == 1 && f.wire_type == 2) text = std::string(f.bytes);
        else if (f.number == 2 && f.wire_type == 5) score = as_float(f.varint);
        else if (f.number == 3 && f.wire_type == 0) type = f.varint;
    }
    set_token(spec, static_cast<int64_t>(spec.tokens.size()), std::move(text), piece_type(type), score);
}

struct TrainerSpec {
    uint64_t model_type = 1;  // UNIGRAM unless set
    int64_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
};

TrainerSpec read_trainer_spec(std::string_view message, const std::string& path) {
    TrainerSpec t;
    ProtoReader r(message, path);
    while (!r.done()) {
        auto f = r.next();
        if (f.wire_type != 0) continue;
        auto as_id = static_cast<int64_t>(static_cast<int32_t>(f.varint));
        if (f.number == 3) t.model_type = f.varint;
        else if (f.number == 40) t.unk_id = as_id;
        else if (f.number == 41) t.bos_id = as_id;
        else if (f.number == 42) t.eos_id = as_id;
        else if (f.number == 43) t.pad_id = as_id;
    }
    return t;
}

bool read_add_dummy_prefix(std::string_view message, const std::string& path) {
    ProtoReader r(message, path);
    bool add = true;
    while (!r.done()) {
        auto f = r.next();
        if (f.number == 3 && f.wire_type == 0) add = f.varint != 0;
    }
    return add;
}

std::string decode_base64(std::string_view in, const std::string& path, size_t line) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        if (c == '=') break;
        int v = value(c);
        if (v < 0) fail(path, "line " + std::to_string(line) + ": invalid base64");
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

// The two parts BPE with only ranks below `max_rank` leaves of `token` (how llama.cpp's
// converter recovers merges from tiktoken ranks); fewer or more parts mean no merge.
std::vector<std::string> bpe_parts(const std::unordered_map<std::string, int32_t>& ranks, const std::string& token,
                                   int32_t max_rank) {
    std::vector<std::string> parts;
    for (char c : token) parts.emplace_back(1, c);
    while (parts.size() > 2) {
        size_t best = 0;
        int32_t best_rank = max_rank;
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            auto it = ranks.find(parts[i] + parts[i + 1]);
            if (it != ranks.end() && it->second < best_rank) {
                best_rank = it->second;
                best = i;
            }
        }
        if (best_rank == max_rank) break;
        parts[best] += parts[best + 1];
        parts.erase(parts.begin() + static_cast<ptrdiff_t>(best) + 1);
    }
    return parts;
}

struct Reader {
    std::string_view data;
    const std::string& path;
    size_t pos = 0;
    bool has(size_t n) const { return n <= data.size() - pos; }
    uint32_t u32() {
        uint32_t v;
        std::memcpy(&v, data.data() + pos, 4);
        pos += 4;
        return v;
    }
};

// llama2.c: int32 max_token_length, then (float score, int32 length, bytes) to the end
// of the file. Gemma.c puts the token count after max_token_length. Returns false when
// the data does not have the layout.
bool parse_llama2c(std::string_view data, const std::string& path, bool counted, TokenizerSpec& spec) {
    Reader r{data, path};
    if (!r.has(counted ? 8 : 4)) return false;
    uint32_t max_len = r.u32();
    uint64_t count = counted ? r.u32() : UINT64_MAX;
    spec.tokens.clear();
    spec.types.clear();
    spec.scores.clear();
    while (r.pos < data.size() && spec.tokens.size() < count) {
        if (!r.has(8)) return false;
        float score = as_float(r.u32());
        uint32_t len = r.u32();
        if (len > max_len || !r.has(len)) return false;
        std::string text(data.substr(r.pos, len));
        r.pos += len;
        // Control tokens are stored as "\n<s>\n"; spaces stand for U+2581.
        TokenType type = TokenType::Normal;
        if (text.size() > 4 && text.front() == '\n' && text.back() == '\n' && text[1] == '<') {
            text = text.substr(1, text.size() - 2);
            type = TokenType::Control;
        } else if (text == "<unk>") {
            type = TokenType::Unknown;
        } else if (tokenizer::byte_token_value(text) >= 0) {
            type = TokenType::Byte;
        } else {
            std::string escaped;
            for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
            text = std::move(escaped);
        }
        set_token(spec, static_cast<int64_t>(spec.tokens.size()), std::move(text), type, score);
    }
    return r.pos == data.size() && (!counted || spec.tokens.size() == count) && !spec.tokens.empty();
}

}  // namespace

void read_sentencepiece_model(const std::string& path, TokenizerSpec& spec) {
    std::string data = read_file(path);
    spec.model = "llama";
    TrainerSpec trainer;
    ProtoReader r(data, path);
    while (!r.done()) {
        auto f = r.next();
        if (f.wire_type != 2) continue;
        if (f.number == 1) read_piece(f.bytes, path, spec);
        else if (f.number == 2) trainer = read_trainer_spec(f.bytes, path);
        else if (f.number == 3 && !read_add_dummy_prefix(f.bytes, path)) spec.add_space_prefix = false;
    }
    if (spec.tokens.empty()) fail(path, "no SentencePiece pieces in the file");
    if (trainer.model_type != 2)
        fail(path, "SentencePiece model type " + std::to_string(trainer.model_type) + " is not supported (only BPE, type 2)");
    auto n = static_cast<int64_t>(spec.tokens.size());
    for (const auto& [name, id] : {std::pair{"unknown", trainer.unk_id}, {"bos", trainer.bos_id}, {"eos", trainer.eos_id},
                                   {"padding", trainer.pad_id}})
        if (id >= 0 && id < n) spec.special_ids[name] = static_cast<int32_t>(id);
}

void read_tiktoken(const std::string& path, TokenizerSpec& spec) {
    std::string text = read_file(path);
    std::unordered_map<std::string, int32_t> ranks;
    std::vector<std::string> by_rank;
    for_each_line(text, [&](std::string_view line, size_t line_no) {
        if (line.empty()) return;
        size_t space = line.find(' ');
        if (space == std::string_view::npos) fail(path, "line " + std::to_string(line_no) + " is not \"base64 rank\"");
        int64_t rank = -1;
        try {
            rank = std::stoll(std::string(line.substr(space + 1)));
        } catch (const std::exception&) {
        }
        if (rank < 0 || rank >= INT32_MAX) fail(path, "line " + std::to_string(line_no) + " has no valid rank");
        std::string bytes = decode_base64(line.substr(0, space), path, line_no);
        if (static_cast<size_t>(rank) >= by_rank.size()) by_rank.resize(rank + 1);
        if (!by_rank[rank].empty() || !ranks.emplace(bytes, static_cast<int32_t>(rank)).second)
            fail(path, "line " + std::to_string(line_no) + " repeats a rank or a token");
        by_rank[rank] = bytes;
    });
    spec.model = "gpt2";
    for (size_t rank = 0; rank < by_rank.size(); ++rank) {
        if (by_rank[rank].empty()) fail(path, "no token has rank " + std::to_string(rank));
        set_token(spec, static_cast<int64_t>(rank), tokenizer::byte_level::encode(by_rank[rank]), TokenType::Normal, 0.0f);
    }
    for (size_t rank = 0; rank < by_rank.size(); ++rank) {
        const std::string& token = by_rank[rank];
        if (token.size() < 2) continue;
        auto parts = bpe_parts(ranks, token, static_cast<int32_t>(rank));
        if (parts.size() != 2) fail(path, "token of rank " + std::to_string(rank) + " cannot be built from two lower-ranked tokens");
        spec.merges.push_back(tokenizer::byte_level::encode(parts[0]) + " " + tokenizer::byte_level::encode(parts[1]));
    }
}

void read_llama2c_tokenizer(const std::string& path, TokenizerSpec& spec) {
    std::string data = read_file(path);
    spec.model = "llama";
    if (!parse_llama2c(data, path, false, spec) && !parse_llama2c(data, path, true, spec))
        fail(path, "not a llama2.c or Gemma.c tokenizer.bin (entries do not add up to the file)");
    for (const auto& [name, texts] : {std::pair{"unknown", std::pair{"<unk>", "<unk>"}}, {"bos", {"<s>", "<bos>"}},
                                      {"eos", {"</s>", "<eos>"}}}) {
        int32_t id = find_token(spec, texts.first);
        if (id < 0) id = find_token(spec, texts.second);
        if (id >= 0) spec.special_ids[name] = id;
    }
}

}  // namespace strata::tool
