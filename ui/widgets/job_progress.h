#pragma once
// A background job's line in a view: a progress bar and Cancel while the job under
// `key` runs; its error and Retry (running `retry`) after it failed or was cancelled.

#include "session/background_job.h"

#include <string>

namespace headscope::ui {

void draw_job_progress(session::BackgroundJobs& jobs, const std::string& key, const char* what,
                       const session::BackgroundJobs::Work& retry);

}   // namespace headscope::ui
