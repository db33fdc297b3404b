#pragma once
// A file path to type and a button to act on it (Enter does the same), with what the
// last try did in one line under it: the Export and session windows' field.

#include <string>

namespace headscope::ui {

class PathPrompt {
public:
    // Draws the field and `button`; true when it was pressed (or Enter). With
    // `warn_existing`, a note says that a file of that name exists and will be replaced.
    bool draw(const char* button, bool warn_existing);
    // What the try did: green, or red when it `failed`.
    void report(std::string message, bool failed);
    void clear_report() { message_.clear(); }
    // The field takes the keyboard when next drawn (a window just opened: Enter acts).
    void focus() { focus_ = true; }

    std::string path;

private:
    std::string message_;
    bool failed_ = false;
    bool focus_ = false;
};

}   // namespace headscope::ui
