// Printing, writing and judging a finished report (report_outputs.hpp).
#include "report_outputs.hpp"

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <numgap/io/atomic_file.hpp>
#include <numgap/report.hpp>

#include "arguments.hpp"
#include "render_svg.hpp"

namespace numgap_cli {

void print_and_write(const numgap::comparison_report& report, const report_outputs& outputs) {
    std::cout << numgap::format_summary_table(report);
    std::cout.flush();

    if (!outputs.csv.empty()) numgap::write_csv(report, outputs.csv);
    if (!outputs.json.empty()) numgap::write_json(report, outputs.json);
    if (!outputs.model_explorer.empty()) numgap::write_model_explorer(report, outputs.model_explorer);
    if (!outputs.dot.empty()) numgap::write_dot(report, outputs.dot);
    if (!outputs.svg.empty()) {
        // Graphviz reads the --dot file, else a temporary next to the SVG:
        // no file the user did not name is written, replaced or removed.
        std::optional<numgap::io::temporary_file> temporary_dot;
        std::filesystem::path dot_path = outputs.dot;
        if (dot_path.empty()) {
            temporary_dot.emplace(outputs.svg + ".dot", "DOT graph");
            dot_path = temporary_dot->path();
            numgap::write_dot(report, dot_path);
        }
        try {
            render_svg(dot_path, outputs.svg);
        } catch (const numgap::error& failure) {
            if (!temporary_dot) throw;
            // Keep the graph so it can be rendered elsewhere, without replacing a file.
            throw numgap::error(std::string(failure.what()) + "; the DOT graph was kept as '" +
                                temporary_dot->keep().string() + "'");
        }
    }
}

int report_exit_status(const numgap::comparison_report& report) {
    if (report.summary.errors != 0) {
        for (const numgap::group_report& group : report.groups)
            if (group.status == numgap::group_status::error)
                std::cerr << "numgap: error: group '"
                          << numgap::terminal_text(group.reference_nodes.empty() ? std::string("?")
                                                                                 : group.reference_nodes.back())
                          << "': " << numgap::terminal_text(group.message) << "\n";
        return exit_unusable;
    }
    if (report.summary.passed + report.summary.failed == 0) {
        // Every row is unmatched or missing: passing here would let a CI gate
        // succeed without a single comparison (e.g. target keys that never match).
        std::cerr << "numgap: nothing was compared: no group has both tensors (" << report.summary.unmatched_reference
                  << " unmatched reference nodes, " << report.summary.unmatched_target << " unmatched target nodes, "
                  << report.summary.missing << " missing groups); check that the runs' keys match\n";
        return exit_fail;
    }
    if (const std::string warning = numgap::coverage_warning(report.summary); !warning.empty()) {
        // Mirrors "nothing compared": a pass over a small fraction of the
        // model is not a pass a CI gate may accept.
        std::cerr << "numgap: " << warning << "\n";
        return exit_fail;
    }
    return report.summary.failed == 0 ? exit_pass : exit_fail;
}

} // namespace numgap_cli
