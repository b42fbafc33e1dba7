// tests/unit/golden.cpp — reading the golden manifest and comparing logits.
#include "golden.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "model/model.h"
#include "test_util.h"

namespace strata::test {
namespace {

std::vector<float> read_f32(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

// The cases of <tests/data>/<sub>/manifest.json.
std::vector<GoldenCase> cases_in(const std::string& sub) {
    const auto dir = data_dir() / sub;
    std::ifstream in(dir / "manifest.json");
    if (!in) throw std::runtime_error("cannot read " + (dir / "manifest.json").string());
    const auto doc = boost::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
    std::vector<GoldenCase> cases;
    for (const auto& jc : doc.at("cases").as_array()) {
        const auto& o = jc.as_object();
        GoldenCase c;
        c.name = o.at("name").as_string().c_str();
        c.weights = o.at("weights").as_string().c_str();
        c.model = dir / o.at("model").as_string().c_str();
        for (const auto& t : o.at("tokens").as_array()) c.tokens.push_back(static_cast<int32_t>(t.as_int64()));
        c.n_vocab = static_cast<int32_t>(o.at("n_vocab").as_int64());
        c.logits = read_f32(dir / o.at("logits").as_string().c_str());
        c.tol_max_rel = o.at("tolerance").at("max_abs_rel").to_number<double>();
        c.tol_rms_rel = o.at("tolerance").at("rms_rel").to_number<double>();
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace

std::vector<GoldenCase> golden_cases() { return cases_in("golden"); }
std::vector<GoldenCase> arch_cases() { return cases_in("archs"); }

Comparison compare_logits(const std::vector<float>& a, const std::vector<float>& g, int32_t n_vocab, double tol_rms_rel) {
    if (a.size() != g.size()) throw std::invalid_argument("compare_logits: sizes differ");
    Comparison c;
    double max_diff = 0, max_g = 0, sq_diff = 0, sq_g = 0;
    for (size_t i = 0; i < g.size(); ++i) {
        const double d = double(a[i]) - g[i];
        max_diff = std::max(max_diff, std::abs(d));
        max_g = std::max(max_g, std::abs(double(g[i])));
        sq_diff += d * d;
        sq_g += double(g[i]) * g[i];
    }
    c.max_rel = max_diff / max_g;
    c.rms_rel = std::sqrt(sq_diff / sq_g);
    const double margin = 2 * tol_rms_rel * std::sqrt(sq_g / g.size());
    c.positions = static_cast<int>(g.size() / n_vocab);
    for (int p = 0; p < c.positions; ++p) {
        const float* ga = g.data() + size_t(p) * n_vocab;
        const float* aa = a.data() + size_t(p) * n_vocab;
        const auto ea = std::max_element(aa, aa + n_vocab) - aa;
        const auto gb = std::max_element(ga, ga + n_vocab) - ga;
        c.top1_strict += ea == gb;
        c.top1_in_band += ga[ea] >= ga[gb] - margin;
    }
    return c;
}

std::vector<float> logits_in_chunks(model::Model& m, const std::vector<int32_t>& tokens, size_t chunk, kv::KvType kv_type) {
    auto cache = m.new_cache(static_cast<int32_t>(tokens.size()), nullptr, kv_type);
    std::vector<float> all, part;
    for (size_t b = 0; b < tokens.size(); b += chunk) {
        const std::vector<int32_t> piece(tokens.begin() + b, tokens.begin() + std::min(tokens.size(), b + chunk));
        const model::SequenceBatch s{&cache, piece, model::Logits::All};
        m.forward({&s, 1}, part);
        all.insert(all.end(), part.begin(), part.end());
    }
    return all;
}

}  // namespace strata::test
