#pragma once
// The numgap::error an action throws, whole, so that a test can check its
// kind() and where() beside its message; empty when the action returns
// normally. Other exceptions escape, failing the test.
#include <optional>

#include <numgap/core/error.hpp>

namespace numgap_test {

template <class Action>
std::optional<numgap::error> caught_error(Action&& action) {
    try {
        action();
    } catch (const numgap::error& failure) {
        return failure;
    }
    return std::nullopt;
}

} // namespace numgap_test
