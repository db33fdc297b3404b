// core/nn sits below core/models: this include must not compile.
#include "core/models/model.h"
