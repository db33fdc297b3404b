#pragma once
// A model session from a test: the model of `choice` opened and adopted, as the worker
// does before its first request.

#include "session/model_session.h"

namespace headscope::test {

inline session::ModelSession session_on(const session::ModelChoice& choice) {
    session::ModelSession session;
    session.adopt(session::open_model_choice(choice, {}), choice);
    return session;
}

}   // namespace headscope::test
