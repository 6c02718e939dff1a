#pragma once
// Test support for tests/compare: a keyed tensor source like
// io::run_directory (contains() + load() returning a holder) over in-memory
// views, counting its loads so tests can pin how much work a comparison does.
#include <atomic>
#include <map>
#include <string>

#include <numgap/core/tensor_view.hpp>

namespace numgap_test {

struct keyed_source {
    struct holder {
        numgap::tensor_view held;
        numgap::tensor_view view() const { return held; }
    };
    std::map<std::string, numgap::tensor_view> views;
    mutable std::atomic<int> loads{0};
    bool contains(const std::string& key) const { return views.count(key) != 0; }
    holder load(const std::string& key) const {
        ++loads;
        return holder{views.at(key)};
    }
};

} // namespace numgap_test
