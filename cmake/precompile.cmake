# The headers nearly every file of a room parses, parsed once per library: Eigen and
# nlohmann-json take seconds per file, most of a small file's compile time.
function(headscope_precompile_common target)
    target_precompile_headers(${target} PRIVATE <Eigen/Core> <nlohmann/json.hpp> <algorithm> <functional> <memory>
                              <optional> <span> <string> <string_view> <vector>)
endfunction()
