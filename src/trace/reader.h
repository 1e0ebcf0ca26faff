// Reads trace files through trace/record.h (never a copy of the layout): checks that a file was
// written by this version's format and op table, then hands out its records in file order.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/record.h"

namespace gofl {

// FFTW wrappers are not exported symbols of the generated table, so their records carry this sym.

// Thrown for a path that cannot be read as a trace of this version; what() names the file.
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TraceSite {
  std::string module;  // empty when the writer could not name the module
  uint64_t offset = 0;
};

class TraceReader {
 public:
  TraceReader() = default;
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // Checks the header of `path` (a regular file: never a FIFO or a device); throws TraceError
  // naming what is wrong with it. Once per reader. The file is not kept open.
  void open(const std::string& path);

  const std::string& path() const { return path_; }
  const gofl_file_header& header() const { return header_; }
  uint64_t record_count() const { return n_records_; }  // complete records
  uint64_t tail_bytes() const { return tail_bytes_; }   // a partial record at the end (writer killed)

  // The next record in file order, false at the end (also at a record of kind 0: space its writer
  // had reserved but not used). Throws TraceError for a damaged record. The file is opened at the
  // first call and closed at the end.
  bool next(gofl_record* rec);

  // Module and offset of a call-site address, from this file's SITE records (nullptr if none).
  // The first use reads the whole file once, so a SITE record anywhere in the file counts.
  const TraceSite* site(uint64_t addr);

 private:
  void check_record(const gofl_record& r) const;
  void check_op_sym(uint16_t op, uint16_t sym) const;
  void check_counted(const gofl_counted_record& c) const;
  FILE* reopen(uint64_t at) const;

  std::string path_;
  FILE* f_ = nullptr;  // open only while next() reads the records
  dev_t dev_ = 0;      // the file open() checked: reading it again must find the same one
  ino_t ino_ = 0;
  gofl_file_header header_{};
  uint64_t n_records_ = 0;
  uint64_t tail_bytes_ = 0;
  uint64_t index_ = 0;  // of the next record
  bool sites_loaded_ = false;
  std::unordered_map<uint64_t, TraceSite> sites_;
};

// A fixed-size text field of the header or a SITE record as a string (stops at NUL or the end).
std::string trace_text(const char* field, size_t cap);

// Expands trace files and folders (every *.gofltrace file in them, sorted) into file paths, in the
// order given. Throws TraceError for a missing path or a folder without trace files.
std::vector<std::string> trace_paths(const std::vector<std::string>& args);

}  // namespace gofl
