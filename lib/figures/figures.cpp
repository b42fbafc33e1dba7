// figures/figures.cpp — names and values of the status figures (see figures.h).
#include "figures/figures.h"

#include <cmath>

namespace strata::figures {

std::string metric_name(const Figure& figure) {
    if (!figure.metric.empty())
        return std::string(figure.metric);
    std::string name = "strata_" + std::string(figure.name);
    if (figure.kind == Kind::Info)
        return name + "_info";
    if (figure.kind == Kind::Counter && !name.ends_with("_total"))
        return name + "_total";
    return name;
}

const Figure* find_figure(std::string_view name) {
    for (const Figure& figure : kFigures)
        if (figure.name == name)
            return &figure;
    return nullptr;
}

Snapshot::Snapshot() {
    for (size_t i = 0; i < kFigureCount; ++i)
        if (kFigures[i].kind == Kind::Info)
            values_[i] = std::string();
}

void Snapshot::set(Id id, double value) { values_[id.index()] = std::isfinite(value) ? value : 0.0; }

void Snapshot::set(Id id, std::string value) { values_[id.index()] = std::move(value); }

double as_number(const Value& value) {
    return std::visit(
        [](const auto& v) -> double {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
                return 0;
            else
                return static_cast<double>(v);
        },
        value);
}

double Snapshot::number(Id id) const { return as_number(values_[id.index()]); }

const std::string& Snapshot::text(Id id) const { return std::get<std::string>(values_[id.index()]); }

}  // namespace strata::figures
