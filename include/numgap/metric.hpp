#pragma once
// Metrics: pass rules, the `metric` concept, one header per built-in metric,
// the runtime metric_set, and evaluate() with its result types.
#include <numgap/metric/allclose.hpp>
#include <numgap/metric/atol.hpp>
#include <numgap/metric/builtin_metrics.hpp>
#include <numgap/metric/concept.hpp>
#include <numgap/metric/cosine.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_segments.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/kl_div.hpp>
#include <numgap/metric/l1.hpp>
#include <numgap/metric/max_abs.hpp>
#include <numgap/metric/max_rel.hpp>
#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/metric/mse.hpp>
#include <numgap/metric/norm_l2.hpp>
#include <numgap/metric/pass_layout.hpp>
#include <numgap/metric/prepared_metric_set.hpp>
#include <numgap/metric/psnr_db.hpp>
#include <numgap/metric/rule.hpp>
#include <numgap/metric/side_stats.hpp>
#include <numgap/metric/snr_db.hpp>
#include <numgap/metric/topk.hpp>
