// core/ sits below the session layer.
#include "session/request.h"
