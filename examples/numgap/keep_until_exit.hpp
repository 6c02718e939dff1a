#pragma once
// keep_until_exit: hands objects the CLI no longer needs to the end of the
// process instead of destroying them. The comparison of a million-node run
// holds millions of small blocks (report rows, graph nodes, tensor specs);
// freeing them one by one took ~0.3 s of a 10^6-node comparison
// (2-vCPU KVM guest, AMD EPYC Zen 5), and the process exits right after,
// when the kernel takes the pages back at once. Compilers do the same with
// their syntax trees.
//
// Only for values whose destructors do nothing the user can see: output files
// are written and closed before, and mapped dumps are unmapped by the exit.
// The objects stay reachable (from a static), so leak checkers do not report them.
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace numgap_cli {

template <class... Values>
void keep_until_exit(Values&&... values) {
    static auto* const kept = new std::vector<std::shared_ptr<void>>(); // never deleted: that is the point
    (kept->push_back(std::make_shared<std::remove_cvref_t<Values>>(std::forward<Values>(values))), ...);
}

} // namespace numgap_cli
