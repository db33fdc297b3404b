#pragma once
// The one exception type of core/. Thrown with context (file, tensor, expected vs
// actual) where a problem is found, caught once at a boundary: the CLI prints it as
// one line and exits 2; the GUI shows it in a banner and keeps the previous result.

#include <stdexcept>
#include <string>

namespace headscope {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}   // namespace headscope
