#pragma once
// The one exception type numgap throws for bad data: its message names the
// file, tensor or node involved and the reason, in plain English.
#include <stdexcept>
#include <string>

namespace numgap {

class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace numgap
