#pragma once
// A name for what a head does on one input, read off its metrics (core/head_metrics):
// what a person would call it on sight. Trained heads were not built to a role, so the
// app names them by what they measurably do.
//
//   induction       induction >= 0.4     weight on the token after an earlier copy of the current one
//   previous token  prev_token >= 0.5
//   current token   diag >= 0.5
//   first token     sink_mass >= 0.6     (text; "[CLS]" for images): a resting place
// The rule with the largest score / threshold wins; a head meeting none has no name.

#include "core/analysis/head_metrics.h"

#include <optional>
#include <string>

namespace headscope {

struct MeasuredRole {
    std::string name;   // "induction", "previous token", "current token", "first token", "[CLS]"
    Metric metric;      // the metric it was read from
    double score = 0.0;
};

// images: the input is a picture (position 0 is [CLS], not a first word).
std::optional<MeasuredRole> measured_role(const HeadMetrics& metrics, bool images);

}   // namespace headscope
