// model/layer.cpp — the tensors each block and norm of a layer reads, and the words that
// describe a layer's blocks.
#include "model/layer.h"

#include <algorithm>

#include "model/hparams.h"

namespace strata::model {
namespace {

using Needs = std::vector<TensorNeed>;

void add(Needs& n, const Norm& norm, const HParams& hp) {
    if (!norm) return;
    n.push_back({norm.weight, {hp.n_embd}});
    if (norm.bias != kSlots) n.push_back({norm.bias, {hp.n_embd}});
}

// A layer reading another's keys and values (kv_source) has no k, v tensors of its own.
void add(Needs& n, const Attention& a, const HParams& hp) {
    const int64_t E = hp.n_embd, Q = a.q_dim(), KV = a.kv_dim();
    const bool own_kv = a.kv_source < 0;
    if (a.fused_qkv) n.push_back({Wqkv, {E, Q + 2 * KV}});
    else n.push_back({Wq, {E, a.gated ? 2 * Q : Q}});
    if (!a.fused_qkv && own_kv) n.insert(n.end(), {{Wk, {E, KV}}, {Wv, {E, KV}, a.v_proj == Presence::Required}});
    if (a.qkv_bias != Presence::None) {
        const bool required = a.qkv_bias == Presence::Required;
        n.insert(n.end(), {{Bq, {Q}, required}, {Bk, {KV}, required}, {Bv, {KV}, required}});
    }
    if (a.qk_norm != QkNorm::None) {
        const bool per_head = a.qk_norm == QkNorm::PerHead;
        n.push_back({QNorm, {per_head ? a.head_dim : Q}});
        if (own_kv) n.push_back({KNorm, {per_head ? a.head_dim : KV}});
    }
    n.push_back({Wo, {Q, E}});
    if (a.out_bias) n.push_back({Bo, {E}});
    if (a.sinks) n.push_back({Sinks, {a.n_head}});
}

void add(Needs& n, const GatedFfn& f, const HParams& hp) {
    const int64_t E = hp.n_embd, F = f.n_ff;
    if (f.fused) n.push_back({Up, {E, 2 * F}});
    else n.insert(n.end(), {{Gate, {E, F}}, {Up, {E, F}}});
    n.push_back({Down, {F, E}});
}

void add(Needs& n, const Moe& m, const HParams& hp) {
    const int64_t E = hp.n_embd, X = hp.n_expert, FX = hp.n_ff_exp, FS = hp.n_ff_shexp;
    n.push_back({Router, {E, X}});
    if (m.scaled_router) n.push_back({RouterScale, {E}});
    const bool either = m.fused_gate_up == Presence::Optional;  // which the file has is checked at load (model.cpp)
    if (m.fused_gate_up != Presence::None) n.push_back({GateUpExps, {E, 2 * FX, X}, !either});
    if (m.fused_gate_up != Presence::Required) n.insert(n.end(), {{GateExps, {E, FX, X}, !either}, {UpExps, {E, FX, X}, !either}});
    n.push_back({DownExps, {FX, E, X}});
    if (m.scaled_router) n.push_back({DownExpsScale, {X}, false});
    if (m.biases) n.insert(n.end(), {{RouterB, {X}}, {GateExpsB, {FX, X}}, {UpExpsB, {FX, X}}, {DownExpsB, {E, X}}});
    if (m.gating == Gating::Sigmoid) n.push_back({ExpProbsB, {X}});
    if (m.shared_expert) n.insert(n.end(), {{GateInpShexp, {E}}, {GateShexp, {E, FS}}, {UpShexp, {E, FS}}, {DownShexp, {FS, E}}});
}

void add(Needs& n, const DeltaNet&, const HParams& hp) {
    const auto& s = hp.ssm;
    const int64_t E = hp.n_embd, V = s.value_dim(), H = s.n_v_heads;
    n.insert(n.end(), {{Wqkv, {E, s.conv_dim()}}, {AttnGate, {E, V}}, {SsmConv, {s.d_conv, s.conv_dim()}, true, true}, {SsmDt, {H}},
                       {SsmA, {H}}, {SsmBeta, {E, H}}, {SsmAlpha, {E, H}}, {SsmNorm, {s.d_state}}, {SsmOut, {V, E}}});
}

void add(Needs& n, const ShortConv&, const HParams& hp) {
    const int64_t E = hp.n_embd;
    n.insert(n.end(), {{ConvKernel, {hp.shortconv, E}, true, true}, {ConvIn, {E, 3 * E}}, {ConvOut, {E, E}}});
}

void add(Needs& n, const Mlp&, const HParams& hp) {
    const int64_t E = hp.n_embd, F = hp.n_ff;
    n.insert(n.end(), {{Up, {E, F}}, {UpB, {F}}, {Down, {F, E}}, {DownB, {E}}});
}

void add(Needs& n, const PerLayerInput&, const HParams& hp) {
    const int64_t E = hp.n_embd, P = hp.n_embd_per_layer;
    n.insert(n.end(), {{PerLayerGate, {E, P}}, {PerLayerProj, {P, E}}});
}

void add_branch(Needs& n, const Branch& b, const HParams& hp);

void add(Needs& n, const Parallel& p, const HParams& hp) {
    for (const Branch& part : p.parts) add_branch(n, part, hp);
}

void add_branch(Needs& n, const Branch& b, const HParams& hp) {
    add(n, b.pre, hp);
    std::visit([&](const auto& block) { add(n, block, hp); }, b.block);
    add(n, b.post, hp);
    add(n, b.after, hp);
}

using Words = std::vector<std::string>;

const char* act_name(FfnAct act) {
    switch (act) {
        case FfnAct::Silu: return "SiLU-gated ffn";
        case FfnAct::GeluTanh: return "GELU(tanh)-gated ffn";
        case FfnAct::SwigluOai: return "clamped SwiGLU ffn";
    }
    return "";
}

void describe(Words& w, const Attention& a, const HParams& hp) {
    if (hp.n_rot > 0) w.push_back(a.rope == RopeStyle::Neox ? "neox rope" : "normal rope");
    if (a.head_dim != hp.head_dim || a.n_head_kv != hp.n_head_kv) w.push_back("per-layer head sizes and kv heads");
    if (a.v_proj == Presence::Optional) w.push_back("k as v where attn_v is absent");
    if (a.v_norm) w.push_back("v normalized");
    if (a.kv_source >= 0) w.push_back("kv shared with earlier layers");
    if (a.fused_qkv) w.push_back("fused qkv");
    if (a.qkv_bias == Presence::Required) w.push_back("q/k/v biases");
    if (a.qk_norm != QkNorm::None) w.push_back(a.qk_norm == QkNorm::PerHead ? "per-head q/k norm" : "q/k norm");
    if (a.softcap > 0) w.push_back("attention soft-cap");
    if (a.out_bias) w.push_back("output bias");
    if (a.sinks) w.push_back("attention sinks");
    if (a.gated) w.push_back("sigmoid-gated attention output");
}

void describe(Words& w, const GatedFfn& f, const HParams&) {
    w.push_back(act_name(f.act));
    if (f.fused) w.push_back("fused gate/up");
}

void describe(Words& w, const Moe& m, const HParams& hp) {
    const char* weights = m.gating == Gating::SoftmaxChosen ? ", softmax over the chosen)"
                          : m.gating == Gating::Sigmoid  ? ", sigmoid with a selection bias, weights renormalized)"
                          : m.renormalize                ? ", weights renormalized)"
                                                         : ")";
    w.push_back(std::to_string(hp.n_expert) + " experts (" + std::to_string(hp.n_expert_used) + " used" + weights);
    w.push_back(act_name(m.act));
    if (m.biases) w.push_back("router and expert biases");
    if (m.shared_expert) w.push_back("sigmoid-gated shared expert");
    if (m.fused_gate_up == Presence::Required) w.push_back("fused expert gate/up");
    if (m.scaled_router) w.push_back("scaled router input and expert outputs");
}

void describe(Words& w, const PerLayerInput&, const HParams& hp) {
    w.push_back("per-layer inputs (" + std::to_string(hp.n_embd_per_layer) + " per layer, rows read on demand)");
}

void describe_branch(Words& w, const Branch& b, const HParams& hp);

void describe(Words& w, const Parallel& p, const HParams& hp) {
    w.push_back("blocks side by side");
    for (const Branch& part : p.parts) describe_branch(w, part, hp);
}

void describe(Words& w, const DeltaNet&, const HParams& hp) {
    w.push_back("Gated DeltaNet (" + std::to_string(hp.ssm.n_v_heads) + " heads of " + std::to_string(hp.ssm.d_state) + ", conv " +
                std::to_string(hp.ssm.d_conv) + ")");
}

int64_t state_floats(const DeltaNet&, const HParams& hp) {
    const auto& s = hp.ssm;
    return (s.d_conv - 1) * s.conv_dim() + int64_t(s.n_v_heads) * s.d_state * s.d_state;
}

void describe(Words& w, const ShortConv&, const HParams& hp) {
    w.push_back("gated short convolution (" + std::to_string(hp.shortconv) + " taps)");
}

int64_t state_floats(const ShortConv&, const HParams& hp) { return int64_t(hp.shortconv - 1) * hp.n_embd; }

int64_t state_floats(const auto&, const HParams&) { return 0; }

void describe(Words& w, const Mlp&, const HParams&) { w.push_back("GELU ffn with biases"); }

void describe_branch(Words& w, const Branch& b, const HParams& hp) {
    std::visit([&](const auto& block) { describe(w, block, hp); }, b.block);
    if (b.scale != 1.0f) w.push_back("residual scale");
}

}  // namespace

std::vector<TensorNeed> layer_needs(const HParams& hp, int l) {
    Needs n;
    const Layer& layer = hp.layers[size_t(l)];
    for (const Branch& b : layer.branches) add_branch(n, b, hp);
    if (layer.out_scale != Presence::None) n.push_back({LayerOutScale, {1}, layer.out_scale == Presence::Required});
    return n;
}

int64_t layer_state_floats(const HParams& hp, int l) {
    int64_t floats = 0;
    for (const Branch& b : hp.layers[size_t(l)].branches)
        floats += std::visit([&](const auto& block) { return state_floats(block, hp); }, b.block);
    return floats;
}

std::vector<std::string> layer_features(const HParams& hp) {
    Words all;
    for (const Layer& layer : hp.layers) {
        Words w;
        for (const Branch& b : layer.branches) describe_branch(w, b, hp);
        if (layer.out_scale != Presence::None) w.push_back("layer output scale");
        for (auto& word : w)
            if (std::find(all.begin(), all.end(), word) == all.end()) all.push_back(std::move(word));
    }
    return all;
}

}  // namespace strata::model
