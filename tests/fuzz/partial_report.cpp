// libFuzzer target: a partial report of one shard (report/read_partial_report.hpp),
// as `numgap merge` reads it. The input is the partial's JSON text. When it is
// accepted: what the writer makes of it must read back to the same text
// (a correctness oracle for writer and reader together), and merging it as
// the only shard of a comparison must either be refused with numgap::error
// (it claims more shards, or its rows do not fit its graph) or give a report
// every writer takes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/dot.hpp>
#include <numgap/report/json.hpp>
#include <numgap/report/merge_partial_reports.hpp>
#include <numgap/report/partial_report_json.hpp>
#include <numgap/report/read_partial_report.hpp>
#include <numgap/report/summary_table.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace partial_report_target {

NUMGAP_FUZZ_TARGET(partial_report) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    numgap::partial_report partial;
    try {
        partial = numgap::parse_partial_report(text, "fuzz_partial.json");
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
        return 0;
    }
    const std::string written = numgap::to_partial_json(partial);
    if (numgap::to_partial_json(numgap::parse_partial_report(written, "rewritten")) != written) std::abort();
    try {
        const numgap::comparison_report report = numgap::merge_partial_reports({partial});
        (void)numgap::to_json(report);
        (void)numgap::to_csv(report);
        (void)numgap::to_dot(report);
        (void)numgap::format_summary_table(report);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    return 0;
}

} // namespace partial_report_target
