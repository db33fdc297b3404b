// The session layer sits below ui/.
#include "ui/app_window.h"
