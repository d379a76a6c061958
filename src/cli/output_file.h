// SPDX-License-Identifier: Apache-2.0
// OutputFiles: a command's output files, whole or absent (as SQLite's
// atomic commit, in small). Each output is written to a temporary file in
// its own folder (".NAME.strag-XXXXXX": hidden, and no reader of strag takes
// it for a trace) and renamed into place by Commit() only when every output
// of the command is complete. On any error, and when the set is destroyed
// before Commit(), the temporary files are removed and the folders it made
// are removed again when empty: an existing output is left untouched.
//
// "-" is standard output (at most one output may be "-"), written at
// Commit() after the files. An existing output that is not a regular file
// (/dev/null, a FIFO, a terminal), and any path under /dev/ or /proc/
// (/dev/stdout), is written in place when its turn comes: it cannot be
// replaced. A symbolic link is followed: the file it names is
// replaced, the link stays.
//
// Errors: a path that cannot be an output (no such folder, a folder, not
// writable, one of the inputs, given twice) is kInvalidInput (exit 2), found
// by Declare before any work; a failed write, close or rename is kIoError
// (exit 1): "cannot write PATH: No space left on device".

#ifndef STRAG_SRC_CLI_OUTPUT_FILE_H_
#define STRAG_SRC_CLI_OUTPUT_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace strag::cli {

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();  // removes what was not committed

  // A file the command reads: an output that is the same file (by device
  // and inode, whatever the path) is refused. A folder adds the files in it.
  void AddInput(const std::string& path);

  // Checks `path` as the output of `flag` (named in errors, e.g. "--json")
  // and reserves it: "-", or a path in an existing, writable folder that is
  // not a folder, not an input and not another output.
  Status Declare(std::string_view flag, const std::string& path);
  // Checks that `dir` can hold outputs: an existing writable folder, or
  // creatable (its nearest existing ancestor is a writable folder).
  Status DeclareDirectory(std::string_view flag, const std::string& dir);
  // Creates `dir` and its missing parents; the ones made are removed again
  // on failure when empty.
  Status CreateDirectories(const std::string& dir);

  // Writes `bytes` as the whole content of output `path` (declared here if
  // it was not), into its temporary file; "-" keeps them for Commit().
  Status Write(const std::string& path, std::string_view bytes);
  // The path that holds the complete bytes of written output `path` until
  // Commit() (its temporary file; `path` itself for a special file).
  std::string Staged(const std::string& path) const;

  // Renames every written output into place, in the order declared, then
  // writes the standard-output one. After a failed rename the outputs
  // already renamed stay (a rename in one folder fails only on a broken
  // file system).
  Status Commit();

  // Whether an output is standard output: then the terminal summary goes
  // to stderr.
  bool uses_stdout() const { return uses_stdout_; }

 private:
  struct Output {
    std::string path;      // as given
    std::string flag;      // that gave it
    std::string target;    // the file replaced (links followed)
    std::string key;       // target made absolute, for "given twice"
    bool special = false;  // an existing non-regular file: written in place
    bool written = false;
    std::string temp;  // the temporary file until Commit(); empty: none
  };
  Status CheckTarget(std::string_view flag, const std::string& path,
                     Output* out) const;
  bool IsInput(const std::string& path) const;
  Output* Find(const std::string& path);
  const Output* Find(const std::string& path) const;
  Status WriteTemp(Output* out, std::string_view bytes);

  std::vector<std::pair<dev_t, ino_t>> inputs_;
  std::vector<Output> outputs_;         // in the order declared
  std::vector<std::string> made_dirs_;  // deepest last
  bool uses_stdout_ = false;
  std::string stdout_bytes_;
  bool committed_ = false;
};

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_OUTPUT_FILE_H_
