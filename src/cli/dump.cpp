// gpu-offload dump: every CALL record, one line each, as CSV (for scripts and the tests) or a table;
// and every COUNTED record (calls counted below the threshold), one aggregated line each.
#include <inttypes.h>
#include <stdio.h>

#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/options.h"
#include "cli/traces.h"
#include "common/table.h"
#include "report/names.h"
#include "report/text.h"

namespace gofl::cli {
namespace {

// The order is part of the interface: tests and scripts read these columns by name and position.
const char* const kCsvHeader =
    "file,pid,ppid,op,routine,precision,symbol,iface,scheme,ilp64,depth,nested,query,row_major,device,reason,"
    "m,n,k,flops,info,tid,t_start_ns,duration_ns,site,site_module,site_offset,operands,"
    "copy_in_s,compute_s,copy_out_s,gpu_status,verify_error,verify_mismatch,pred_cpu_s,pred_gpu_s,gpu,pci_bus_id,copy_split,gpu_split,core_spared,avoided_bytes,"
    "aggregated,calls,timed_calls,cores_held,staged\n";

std::string operands_field(const gofl_call_record& c) {
  std::string out;
  char buf[96];
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_operand& o = c.operands[i];
    snprintf(buf, sizeof buf, "%s0x%" PRIx64 ":%" PRIu64 ":%" PRIu32 ":%" PRIu32, i ? ";" : "", o.addr, o.bytes,
             o.fp_in, o.fp_out);
    out += buf;
  }
  return out;
}

// gpu: the GPU the process started on (its start record), named on its GPU calls; empty elsewhere and
// in traces written before the GPU was recorded. resident: the record's gofl_record.resident (avoided_bytes).
void csv_line(FILE* out, TraceReader& r, const gofl_call_record& c, uint32_t resident, const gofl_start_gpu& gpu) {
  const gofl_file_header& h = r.header();
  const gofl_op_info& op = gofl_ops[c.op];
  auto flag = [&](uint32_t f) { return (c.flags & f) ? 1 : 0; };
  const TraceSite* site = r.site(c.site);
  const bool on_gpu = c.device == GOFL_DEV_GPU && gpu.recorded;
  std::string site_offset;
  if (site) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64, site->offset);
    site_offset = buf;
  }
  fprintf(out,
          "%s,%d,%d,%s,%s,%c,%s,%s,%s,%d,%u,%d,%d,%d,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.17g,%d,%" PRIu32
          ",%" PRIu64 ",%" PRIu64 ",0x%" PRIx64 ",%s,%s,%s,%.6g,%.6g,%.6g,%u,%.6g,%d,%.6g,%.6g,%s,%s,%d,%d,%d,%" PRIu64 ",0,1,1,%d,%d\n",
          csv_field(r.path()).c_str(), h.pid, h.ppid, op.name, op.routine, op.precision, symbol_name(c),
          iface_name(c), scheme_name(c), flag(GOFL_F_ILP64), c.depth, flag(GOFL_F_NESTED), flag(GOFL_F_QUERY),
          flag(GOFL_F_ROW_MAJOR), device_name(c.device), csv_field(gofl_reason_name(c.reason)).c_str(), c.dims[0],
          c.dims[1], c.dims[2], c.flops, c.info, c.tid, c.t_start_ns, c.duration_ns, c.site,
          site ? csv_field(site->module).c_str() : "", site_offset.c_str(), operands_field(c).c_str(),
          double(c.copy_in_s), double(c.compute_s), double(c.copy_out_s), unsigned(c.gpu_status), double(c.verify_error),
          flag(GOFL_F_VERIFY_MISMATCH), double(c.pred_cpu_s), double(c.pred_gpu_s), on_gpu ? std::to_string(gpu.index).c_str() : "",
          on_gpu ? csv_field(trace_text(gpu.bus_id, sizeof gpu.bus_id)).c_str() : "", flag(GOFL_F_COPY_SPLIT), flag(GOFL_F_SPLIT),
          flag(GOFL_F_CORE_SPARED), resident_input_bytes(c, resident), flag(GOFL_F_CORES_HELD), flag(GOFL_F_STAGED));
}

// The calls a COUNTED record stands for, as one line: aggregated 1 and their count; the first call's
// sizes, the summed work, the first call's start, the estimated time as the duration; no operands,
// thread or GPU fields. depth 1 stands for "nested" (the calls' depths are not kept).
void counted_csv_line(FILE* out, TraceReader& r, const gofl_counted_record& c) {
  const gofl_file_header& h = r.header();
  const gofl_op_info& op = gofl_ops[c.op];
  auto flag = [&](uint32_t f) { return (c.flags & f) ? 1 : 0; };
  const TraceSite* site = r.site(c.site);
  std::string site_offset;
  if (site) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64, site->offset);
    site_offset = buf;
  }
  const gofl_call_record like = [&] {  // for the symbol's names
    gofl_call_record l{};
    l.op = c.op;
    l.sym = c.sym;
    return l;
  }();
  fprintf(out,
          "%s,%d,%d,%s,%s,%c,%s,%s,%s,%d,%d,%d,%d,%d,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.17g,0,,%" PRIu64
          ",%" PRIu64 ",0x%" PRIx64 ",%s,%s,,0,0,0,0,0,0,0,0,,,0,0,0,0,1,%" PRIu64 ",%" PRIu64 ",0,0\n",
          csv_field(r.path()).c_str(), h.pid, h.ppid, op.name, op.routine, op.precision, symbol_name(like),
          iface_name(like), scheme_name(like), flag(GOFL_F_ILP64), flag(GOFL_F_NESTED), flag(GOFL_F_NESTED),
          flag(GOFL_F_QUERY), flag(GOFL_F_ROW_MAJOR), device_name(c.device), csv_field(gofl_reason_name(c.reason)).c_str(),
          c.dims[0], c.dims[1], c.dims[2], c.flops, c.first_start_ns, c.estimated_ns, c.site,
          site ? csv_field(site->module).c_str() : "", site_offset.c_str(), c.calls, c.timed_calls);
}

const char* const kTableFormat = "%7s  %-8s  %-20s  %-3s  %-19s  %5s  %7s  %7s  %7s  %9s  %10s  %9s  %s\n";

void table_line(FILE* out, TraceReader& r, const gofl_call_record& c) {
  const TraceSite* site = r.site(c.site);
  const std::string where = site ? site_label(site->module, site->offset, c.site) : site_label("", 0, c.site);
  fprintf(out, kTableFormat, std::to_string(r.header().pid).c_str(), gofl_ops[c.op].name, symbol_name(c),
          device_name(c.device), gofl_reason_name(c.reason), std::to_string(c.depth).c_str(),
          std::to_string(c.dims[0]).c_str(), std::to_string(c.dims[1]).c_str(), std::to_string(c.dims[2]).c_str(),
          format_si(c.flops).c_str(), "1", format_seconds(c.duration_ns * 1e-9).c_str(), where.c_str());
}

// calls: "x N" (aggregated); time: the estimate, marked "~".
void counted_table_line(FILE* out, TraceReader& r, const gofl_counted_record& c) {
  const TraceSite* site = r.site(c.site);
  const std::string where = site ? site_label(site->module, site->offset, c.site) : site_label("", 0, c.site);
  gofl_call_record like{};
  like.op = c.op;
  like.sym = c.sym;
  fprintf(out, kTableFormat, std::to_string(r.header().pid).c_str(), gofl_ops[c.op].name, symbol_name(like),
          device_name(c.device), gofl_reason_name(c.reason), (c.flags & GOFL_F_NESTED) ? ">0" : "0",
          std::to_string(c.dims[0]).c_str(), std::to_string(c.dims[1]).c_str(), std::to_string(c.dims[2]).c_str(),
          format_si(c.flops).c_str(), ("x " + format_count(c.calls)).c_str(),
          ("~" + format_seconds(c.estimated_ns * 1e-9)).c_str(), where.c_str());
}

// The GPU columns are empty for a failed start, and for a trace written before the GPU was recorded.
// waited_ns: how long the program waited for the start (all of it, unless it ran beside the calls).
const char* const kStartsCsvHeader =
    "file,pid,tid,t_start_ns,duration_ns,ok,message,gpu,gpu_count,pci_bus_id,gpu_name,chosen_by,waited_ns\n";
const char* const kStartsFormat = "%7s  %7s  %10s  %10s  %-3s  %-3s  %-16s  %s\n";

void start_line(FILE* out, bool csv, TraceReader& r, const gofl_start_record& s) {
  const bool gpu = s.ok && s.gpu.recorded;
  const std::string msg = s.ok ? "" : trace_text(s.message, sizeof s.message);
  const std::string index = gpu ? std::to_string(s.gpu.index) : "";
  const std::string bus = gpu ? trace_text(s.gpu.bus_id, sizeof s.gpu.bus_id) : "";
  const std::string chosen = gpu ? trace_text(s.gpu.chosen_by, sizeof s.gpu.chosen_by) : "";
  const uint64_t waited = gofl_start_waited_ns(&s);
  if (csv)
    fprintf(out, "%s,%d,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%d,%s,%s,%s,%s,%s,%s,%" PRIu64 "\n", csv_field(r.path()).c_str(),
            r.header().pid, s.tid, s.t_start_ns, s.duration_ns, s.ok, csv_field(msg).c_str(), index.c_str(),
            gpu ? std::to_string(s.gpu.count).c_str() : "", csv_field(bus).c_str(),
            csv_field(gpu ? trace_text(s.gpu.name, sizeof s.gpu.name) : "").c_str(), csv_field(chosen).c_str(), waited);
  else
    fprintf(out, kStartsFormat, std::to_string(r.header().pid).c_str(), std::to_string(s.tid).c_str(),
            format_seconds(s.duration_ns * 1e-9).c_str(), format_seconds(waited * 1e-9).c_str(), s.ok ? "yes" : "no",
            gpu ? index.c_str() : "-",
            gpu ? bus.c_str() : "-", s.ok ? chosen.c_str() : msg.c_str());
}

// One-time costs (trace/record.h, gofl_setup_record): one line per phase, in file order.
const char* const kSetupCsvHeader = "file,pid,tid,t_ns,what,phase,seconds\n";

const char* setup_subject(const gofl_setup_record& s) {
  return s.op == GOFL_SETUP_AT_START ? "start" : gofl_ops[s.op].name;
}

void setup_csv(FILE* out, TraceReader& r, const gofl_setup_record& s) {
  for (int i = 0; i < s.n_phases; ++i)
    fprintf(out, "%s,%d,%" PRIu32 ",%" PRIu64 ",%s,%s,%.9f\n", csv_field(r.path()).c_str(), r.header().pid, s.tid,
            s.t_ns, setup_subject(s), csv_field(gofl_setup_phase_name(int(s.phases[i].phase))).c_str(),
            double(s.phases[i].duration_ns) * 1e-9);
}

// "pid 123 start: CUDA context 0.251 s, loading ... 0.052 s, ..." (the order they happened in).
void setup_line(FILE* out, TraceReader& r, const gofl_setup_record& s) {
  std::string line = "pid " + std::to_string(r.header().pid) + " " + setup_subject(s) + ":";
  for (int i = 0; i < s.n_phases; ++i) {
    line += i ? ", " : " ";
    line += gofl_setup_phase_name(int(s.phases[i].phase));
    line += " " + format_seconds(double(s.phases[i].duration_ns) * 1e-9);
  }
  fprintf(out, "%s\n", line.c_str());
}

}  // namespace

int dump_command(const std::vector<std::string>& args) {
  const ParsedOptions o = parse_options("dump", args, {{"--csv", nullptr}, {"--starts", nullptr}, {"--setup", nullptr}}, false);
  if (o.help) {
    fputs(find_command_help("dump")->text, stdout);
    return 0;
  }
  if (o.positionals.empty()) throw UsageError("dump", "dump needs a trace folder or file");
  const bool csv = o.has("--csv");
  auto traces = open_traces(o.positionals);

  static char buf[1 << 16];
  setvbuf(stdout, buf, _IOFBF, sizeof buf);
  if (o.has("--setup")) {
    if (csv) fputs(kSetupCsvHeader, stdout);
    gofl_record rec;
    size_t n = 0;
    for (auto& r : traces)
      while (r->next(&rec))
        if (rec.kind == GOFL_REC_SETUP) csv ? setup_csv(stdout, *r, rec.u.setup) : setup_line(stdout, *r, rec.u.setup), ++n;
    if (!csv && n == 0) fputs("(no one-time costs in these traces: no process started the GPU, or they predate them)\n", stdout);
    return 0;
  }
  if (o.has("--starts")) {
    if (csv) fputs(kStartsCsvHeader, stdout);
    else fprintf(stdout, kStartsFormat, "pid", "tid", "took", "waited", "ok", "gpu", "pci", "why that GPU, or why none");
    gofl_record rec;
    size_t starts = 0;
    std::vector<std::string> absent;  // processes that never tried: why none could have succeeded
    std::vector<std::pair<TraceReader*, gofl_setup_record>> split;  // the starts' steps, printed below the table
    for (auto& r : traces)
      while (r->next(&rec)) {
        if (rec.kind == GOFL_REC_GPU_START) start_line(stdout, csv, *r, rec.u.start), ++starts;
        if (rec.kind == GOFL_REC_SETUP && rec.u.setup.op == GOFL_SETUP_AT_START) split.emplace_back(r.get(), rec.u.setup);
        if (rec.kind == GOFL_REC_GPU_ABSENT)
          absent.push_back("pid " + std::to_string(r->header().pid) + ": no GPU could have been used: " +
                           trace_text(rec.u.start.message, sizeof rec.u.start.message));
      }
    if (!csv && starts == 0) {  // a bare header would read as a damaged trace
      fputs("(no process in these traces started the GPU or tried to)\n", stdout);
      for (const std::string& line : absent) fprintf(stdout, "%s\n", line.c_str());
    }
    if (!csv && !split.empty()) {
      fputs("\nWhere the start-up went (each routine's first GPU call: dump --setup):\n", stdout);
      for (auto& [r, s] : split) setup_line(stdout, *r, s);
    }
    return 0;
  }
  if (csv) fputs(kCsvHeader, stdout);
  else fprintf(stdout, kTableFormat, "pid", "op", "symbol", "dev", "reason", "depth", "m", "n", "k", "flops", "calls",
               "time", "site");
  gofl_record rec;
  for (auto& r : traces) {
    gofl_start_gpu gpu{};  // the GPU of the process's start, once its record has passed
    while (r->next(&rec)) {
      if (rec.kind == GOFL_REC_GPU_START && rec.u.start.ok) gpu = rec.u.start.gpu;
      if (rec.kind == GOFL_REC_COUNTED) {
        if (csv) counted_csv_line(stdout, *r, rec.u.counted);
        else counted_table_line(stdout, *r, rec.u.counted);
        continue;
      }
      if (rec.kind != GOFL_REC_CALL) continue;
      if (csv) csv_line(stdout, *r, rec.u.call, rec.resident, gpu);
      else table_line(stdout, *r, rec.u.call);
    }
  }
  return 0;
}

}  // namespace gofl::cli
