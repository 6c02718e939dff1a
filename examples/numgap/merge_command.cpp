// `numgap merge` (merge_command.hpp).
#include "merge_command.hpp"

#include <string>
#include <vector>

#include <numgap/report/merge_partial_reports.hpp>
#include <numgap/report/read_partial_report.hpp>

#include "report_outputs.hpp"

namespace numgap_cli {

int run_merge(const merge_arguments& arguments) {
    std::vector<numgap::partial_report> partials;
    partials.reserve(arguments.partials.size());
    for (const std::string& file : arguments.partials) partials.push_back(numgap::read_partial_report(file));
    const numgap::comparison_report report = numgap::merge_partial_reports(std::move(partials), arguments.partials);
    print_and_write(report, arguments.outputs);
    return report_exit_status(report);
}

} // namespace numgap_cli
