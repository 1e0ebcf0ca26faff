#include "report/analysis.h"

#include <math.h>
#include <string.h>

#include <algorithm>
#include <unordered_map>

#include "common/table.h"
#include "trace/codes.h"
#include "policy/model.h"
#include "policy/profile.h"
#include "report/names.h"

namespace gofl::cli {
namespace {

// A top-level call of a GPU-capable operation, as the avoidable-copy walk needs it.
struct WalkCall {
  uint64_t t_start_ns;
  uint64_t order;  // file position: ties in start time keep file order
  uint16_t op;
  bool on_gpu;     // ran on the GPU (offloaded, forced, or verify mode's GPU run)
  uint8_t n_operands;
  float copy_in_s;
  uint32_t resident;  // gofl_record.resident: inputs a kept device copy served (not copied)
  gofl_operand operands[GOFL_MAX_OPERANDS];
};

struct BufferKey {
  uint64_t addr, bytes;
  bool operator==(const BufferKey& o) const { return addr == o.addr && bytes == o.bytes; }
};
struct BufferKeyHash {
  size_t operator()(const BufferKey& k) const {
    return std::hash<uint64_t>()(k.addr * 0x9e3779b97f4a7c15ull ^ k.bytes);
  }
};
// What the GPU holds: each buffer's content (its fingerprint) as of the last call that used it there.
using Held = std::unordered_map<BufferKey, uint32_t, BufferKeyHash>;

bool ran_on_gpu(const gofl_call_record& c) { return c.device == GOFL_DEV_GPU || c.reason == GOFL_R_VERIFY; }
// The device whose result the program got: a verify call's record names the GPU when the GPU ran it
// too, but the program got the CPU's result and its time is the CPU's (the GPU phases are shown
// apart), so the by-device and by-reason tables count it on the CPU.
int result_device(const gofl_call_record& c) { return c.reason == GOFL_R_VERIFY ? int(GOFL_DEV_CPU) : int(c.device); }

// Bytes of c's inputs whose content the GPU already held and that were copied all the same (an
// input a kept device copy served was not copied: it is in `avoided`), then records what the GPU
// holds afterwards: every input as read, every output as written (an output's content is its fp_out).
double avoidable_inputs(Held& held, const WalkCall& c, double* avoided = nullptr) {
  double bytes = 0;
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_operand& o = c.operands[i];
    if (!o.fp_in) continue;
    if (GOFL_RESIDENCY_OF(c.resident, i) != GOFL_RES_COPIED) {
      if (avoided) *avoided += double(o.bytes);
      continue;
    }
    const auto it = held.find({o.addr, o.bytes});
    if (it != held.end() && it->second == o.fp_in) bytes += double(o.bytes);
  }
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_operand& o = c.operands[i];
    if (o.fp_in) held[{o.addr, o.bytes}] = o.fp_in;
  }
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_operand& o = c.operands[i];
    if (o.fp_out) held[{o.addr, o.bytes}] = o.fp_out;
  }
  return bytes;
}

double input_bytes(const WalkCall& c) {
  double b = 0;
  for (int i = 0; i < c.n_operands; ++i)
    if (c.operands[i].fp_in) b += double(c.operands[i].bytes);
  return b;
}

// One process's calls in time order, twice: as they ran (only the GPU calls hold data there), and
// as if every GPU-capable call had been offloaded (the CPU calls' share is the "if offloaded" row).
void walk_process(std::vector<WalkCall>& calls, Analysis& a) {
  std::sort(calls.begin(), calls.end(), [](const WalkCall& x, const WalkCall& y) {
    return x.t_start_ns != y.t_start_ns ? x.t_start_ns < y.t_start_ns : x.order < y.order;
  });
  Held gpu, all;
  for (const WalkCall& c : calls) {
    OpStats& s = a.ops[c.op];
    const double in = input_bytes(c);
    if (c.on_gpu) {
      double avoided = 0;  // served by kept device copies: not copied, so not in the call's copy-in time
      const double avoid = avoidable_inputs(gpu, c, &avoided);
      const double copied = in - avoided;
      ++s.gpu_walk_calls;
      s.gpu_in_bytes += in;
      s.gpu_avoided_bytes += avoided;
      s.gpu_avoidable_bytes += avoid;
      if (c.copy_in_s > 0 && copied > 0) s.gpu_avoidable_measured_s += avoid * double(c.copy_in_s) / copied;
      else s.gpu_avoidable_unmeasured_bytes += avoid;
      avoidable_inputs(all, c);
    } else {
      const double avoid = avoidable_inputs(all, c);
      ++s.cpu_walk_calls;
      s.cpu_in_bytes += in;
      s.cpu_avoidable_bytes += avoid;
    }
  }
}

// Calls of ops the GPU runs, that could have gone there: not the variants or arguments it refuses.
bool walk_candidate(const gofl_call_record& c) {
  if (!gofl_ops[c.op].gpu_capable || (c.flags & (GOFL_F_NESTED | GOFL_F_QUERY))) return false;
  return c.reason != GOFL_R_NOT_GPU_CAPABLE && c.reason != GOFL_R_INVALID_ARGS;
}

const std::string kNoModule;

// The row of a call site: by module and offset where the trace names the module, else by address.
SiteStats& site_stats(Analysis& a, const TraceSite* site, uint64_t addr) {
  const std::pair<std::string, uint64_t> key = site && !site->module.empty() ? std::make_pair(site->module, site->offset)
                                                                              : std::make_pair(std::string(), addr);
  SiteStats& ss = a.sites[key];
  if (ss.label.empty()) ss.label = site_label(key.first, key.second, addr);
  return ss;
}

void add_call(Analysis& a, TraceReader& r, const gofl_call_record& c, std::vector<WalkCall>& walk, uint64_t order,
              uint32_t resident, std::map<int, std::vector<Point>>& preds, std::map<int, uint64_t>& pred_seen,
              std::vector<TimedCall>& timed) {
  const bool nested = c.flags & GOFL_F_NESTED, query = c.flags & GOFL_F_QUERY;
  ReasonStats& rs = a.reasons[{result_device(c), c.reason}];
  ++rs.calls;
  ++rs.ops[c.op];
  OpStats& s = a.ops[c.op];
  if (nested) { ++s.nested; return; }
  if (query) { ++s.queries; return; }
  const int dev = result_device(c) == GOFL_DEV_GPU ? 1 : 0;
  const double secs = double(c.duration_ns) * 1e-9;
  rs.time_ns += c.duration_ns;
  ++s.calls;
  if (dev) ++s.gpu_calls;
  s.time_ns += c.duration_ns;
  s.flops += c.flops;
  ++s.largest_dim[std::max({c.dims[0], c.dims[1], c.dims[2]})];
  s.dev[dev].calls++;
  s.dev[dev].ns += c.duration_ns;
  s.dev[dev].flops += c.flops;

  if (ran_on_gpu(c) && (c.copy_in_s > 0 || c.compute_s > 0 || c.copy_out_s > 0)) {
    ++s.gpu_timed_calls;
    s.copy_in_s += c.copy_in_s;
    s.compute_s += c.compute_s;
    s.copy_out_s += c.copy_out_s;
    s.gpu_wall_s += c.reason == GOFL_R_VERIFY ? double(c.copy_in_s) + c.compute_s + c.copy_out_s : secs;
    // Bytes only where the copy was timed, so bytes / seconds is a rate; the bytes the host copied
    // (half of an operand that crosses one triangle at a time).
    double in = 0;
    for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
      const double moved = double(c.operands[i].bytes) * gofl_copied_share(c.op, i);
      if (c.operands[i].fp_in && c.copy_in_s > 0 && GOFL_RESIDENCY_OF(resident, i) == GOFL_RES_COPIED)
        in += moved;  // a kept device copy served it: not copied
      if (c.operands[i].fp_out && c.copy_out_s > 0) s.bytes_out += moved;
    }
    s.bytes_in += in;
    Analysis::CopyIn& ci = a.copy_in_by_cores[(c.flags & GOFL_F_CORES_HELD) ? 1 : 0];
    ++ci.calls;
    ci.bytes += in;
    ci.seconds += c.copy_in_s;
  }
  if (c.reason == GOFL_R_GPU_FAILED || c.gpu_status) {
    FailureStats& f = a.failures[{c.gpu_status, c.gpu_detail}];
    ++f.calls;
    ++f.ops[c.op];
  }
  if (c.reason == GOFL_R_VERIFY) {
    ++a.verify.calls;
    a.verify.worst_any = std::max(a.verify.worst_any, double(c.verify_error));
    if (c.flags & GOFL_F_VERIFY_MISMATCH) {
      ++a.verify.mismatches;
      a.verify.worst_mismatch = std::max(a.verify.worst_mismatch, double(c.verify_error));
      MismatchGroup& g = a.verify.groups[{c.op, c.dims[0], c.dims[1], c.dims[2]}];
      ++g.calls;
      g.worst = std::max(g.worst, double(c.verify_error));
    }
  }

  // The model's accuracy on the device that ran the call (a verify call's time covers both runs).
  const float pred = dev ? c.pred_gpu_s : c.pred_cpu_s;
  if (pred > 0 && c.reason != GOFL_R_VERIFY && c.duration_ns > 0) {
    a.model.ratio[dev].push_back(float(secs / pred));
    Point p;
    p.x = pred;
    p.y = secs;
    p.device = uint8_t(dev);
    p.op = c.op;
    memcpy(p.dims, c.dims, sizeof p.dims);
    a.model.points.add(p);
  }
  if (dev && c.pred_cpu_s > 0) {
    ++a.model.gpu_calls_with_cpu_pred;
    a.model.gpu_pred_cpu_s += c.pred_cpu_s;
    a.model.gpu_observed_s += secs;
  }
  if (c.pred_cpu_s > 0 && c.pred_gpu_s > 0 && c.flops > 0) {
    // A bounded, deterministic sample per operation: every k-th call once the sample is full.
    std::vector<Point>& v = preds[c.op];
    const uint64_t n = ++pred_seen[c.op];
    Point p;
    p.x = c.flops;
    p.y = c.pred_cpu_s;
    p.z = c.pred_gpu_s;
    if (v.size() < 4000) v.push_back(p);
    else if (n % 7 == 0) v[(n / 7) % v.size()] = p;
  }
  if (c.flops > 0 && c.duration_ns > 0) {
    Point p;
    p.x = c.flops;
    p.y = secs;
    p.device = uint8_t(dev);
    p.op = c.op;
    memcpy(p.dims, c.dims, sizeof p.dims);
    a.work_points.add(p);
  }

  if (gofl_ops[c.op].gpu_capable && c.flops > 0) {
    Point p;
    p.x = c.flops;
    for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
      if (c.operands[i].fp_in) p.y += double(c.operands[i].bytes);
      if (c.operands[i].fp_out) p.z += double(c.operands[i].bytes);
    }
    p.t = secs;
    p.device = uint8_t(ran_on_gpu(c) ? 1 : 0);
    p.op = c.op;
    a.sizes.try_emplace(c.op, 4000).first->second.add(p);
  }
  if (walk_candidate(c)) {
    WalkCall w;
    w.t_start_ns = c.t_start_ns;
    w.order = order;
    w.op = c.op;
    w.on_gpu = ran_on_gpu(c);
    w.n_operands = std::min<uint8_t>(c.n_operands, GOFL_MAX_OPERANDS);
    w.copy_in_s = c.copy_in_s;
    w.resident = resident;
    memcpy(w.operands, c.operands, sizeof w.operands);
    walk.push_back(w);
  }

  const TraceSite* site = r.site(c.site);
  TimedCall tc;
  tc.tid = c.tid;
  tc.t_start_ns = c.t_start_ns;
  tc.duration_ns = c.duration_ns;
  tc.order = order;
  tc.op = c.op;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i)
    if (c.operands[i].fp_in) tc.in_bytes += double(c.operands[i].bytes);
  tc.module = site ? &site->module : &kNoModule;
  tc.after_counted = (c.flags & GOFL_F_AFTER_COUNTED) != 0;
  timed.push_back(tc);
  SiteStats& ss = site_stats(a, site, c.site);
  ++ss.calls;
  ss.time_ns += c.duration_ns;
  ss.ops.insert(c.op);
}

// Calls counted below the threshold: in the same tables as the calls recorded one by one, with
// their estimated time. They have no operands and no place in time: no chart, model or copy walk.
void add_counted(Analysis& a, TraceReader& r, const gofl_counted_record& c, std::vector<CountedCalls>& counted) {
  ++a.counted_records;
  ReasonStats& rs = a.reasons[{c.device, c.reason}];
  rs.calls += c.calls;
  rs.ops[c.op] += c.calls;
  OpStats& s = a.ops[c.op];
  s.counted += c.calls;
  s.counted_timed += c.timed_calls;
  if (c.flags & GOFL_F_NESTED) { s.nested += c.calls; return; }
  if (c.flags & GOFL_F_QUERY) { s.queries += c.calls; return; }
  const TraceSite* site = r.site(c.site);
  SiteStats& ss = site_stats(a, site, c.site);  // the application's own calls only, as add_call
  ss.calls += c.calls;
  ss.counted += c.calls;
  ss.ops.insert(c.op);
  ss.time_ns += c.estimated_ns;
  rs.time_ns += c.estimated_ns;
  s.calls += c.calls;
  s.time_ns += c.estimated_ns;
  s.flops += c.flops;
  s.largest_dim[std::max({c.dims[0], c.dims[1], c.dims[2]})] += c.calls;
  s.dev[0].calls += c.calls;
  s.dev[0].ns += c.estimated_ns;
  s.dev[0].flops += c.flops;
  counted.push_back(CountedCalls{c.op, site ? &site->module : &kNoModule, c.calls, c.estimated_ns});
}

void add_file(Analysis& a, TraceReader& r, std::map<int, std::vector<Point>>& preds,
              std::map<int, uint64_t>& pred_seen) {
  const gofl_file_header& h = r.header();
  const std::string host = trace_text(h.host, sizeof h.host);
  a.processes.insert({host, h.pid});
  a.hosts.insert(host);
  ++a.programs[trace_text(h.program, sizeof h.program)];
  const std::string profile = trace_text(h.profile, sizeof h.profile);
  a.profiles.insert(profile.empty() ? "built-in" : profile);
  a.levels.insert(std::to_string(h.level));
  a.device_modes.insert(gofl_device_mode_name(h.device_mode));
  if (!a.first_realtime_ns || h.start_realtime_ns < a.first_realtime_ns) a.first_realtime_ns = h.start_realtime_ns;
  std::vector<WalkCall> walk;  // a trace file is one process
  std::vector<TimedCall> timed;
  std::vector<CountedCalls> counted;
  uint64_t last_end_ns = h.start_monotonic_ns;
  gofl_record rec;
  uint64_t order = 0;
  while (r.next(&rec)) {
    if (rec.kind == GOFL_REC_GPU_START) {
      const gofl_start_record& s = rec.u.start;
      GpuStart g{s.duration_ns * 1e-9, gofl_start_waited_ns(&s) * 1e-9, s.ok != 0,
                 s.ok ? "" : trace_text(s.message, sizeof s.message), ""};
      if (s.ok && s.gpu.recorded)
        g.gpu = host + " GPU " + std::to_string(s.gpu.index) + " (" + trace_text(s.gpu.bus_id, sizeof s.gpu.bus_id) + ")";
      a.starts.push_back(g);
      continue;
    }
    if (rec.kind == GOFL_REC_SETUP) {
      const gofl_setup_record& s = rec.u.setup;
      for (int i = 0; i < s.n_phases; ++i) {
        const double sec = double(s.phases[i].duration_ns) * 1e-9;
        if (s.op == GOFL_SETUP_AT_START) a.start_phases[int(s.phases[i].phase)] += sec;
        else a.first_calls[s.op][int(s.phases[i].phase)] += sec;
      }
      continue;
    }
    if (rec.kind == GOFL_REC_GPU_ABSENT) {
      a.gpu_absent.insert(trace_text(rec.u.start.message, sizeof rec.u.start.message));
      continue;
    }
    if (rec.kind == GOFL_REC_COUNTED) {
      add_counted(a, r, rec.u.counted, counted);
      continue;
    }
    if (rec.kind != GOFL_REC_CALL) continue;
    ++a.records;
    last_end_ns = std::max(last_end_ns, rec.u.call.t_start_ns + rec.u.call.duration_ns);
    add_call(a, r, rec.u.call, walk, order++, rec.resident, preds, pred_seen, timed);
  }
  walk_process(walk, a);
  account_conversions(timed, counted, a.conversions);
  a.conversions.program_ns += last_end_ns - h.start_monotonic_ns;
}

Crossover crossover_of(int op, std::vector<Point>& v, uint64_t calls) {
  Crossover x;
  x.op = op;
  x.calls = calls;
  std::sort(v.begin(), v.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  // The split that best separates "CPU predicted faster" (below) from "GPU predicted faster" (above).
  const size_t n = v.size();
  size_t gpu_below = 0, cpu_above = 0;
  for (const Point& p : v) cpu_above += p.z >= p.y;
  size_t best = 0, best_err = cpu_above;  // split at 0: everything "GPU"
  for (size_t i = 0; i < n; ++i) {
    if (v[i].z < v[i].y) ++gpu_below;
    else --cpu_above;
    if (gpu_below + cpu_above < best_err) {
      best_err = gpu_below + cpu_above;
      best = i + 1;
    }
  }
  if (best == 0) x.kind = Crossover::kGpuAlways;
  else if (best == n) x.kind = Crossover::kCpuAlways;
  else x.flops = sqrt(v[best - 1].x * v[best].x);
  // Median predictions per quarter decade of work.
  for (size_t i = 0; i < n;) {
    const double bin = floor(log10(v[i].x) * 4);
    size_t j = i;
    std::vector<float> fl, pc, pg;
    while (j < n && floor(log10(v[j].x) * 4) == bin) {
      fl.push_back(float(v[j].x));
      pc.push_back(float(v[j].y));
      pg.push_back(float(v[j].z));
      ++j;
    }
    x.curve.emplace_back(quantile(fl, 0.5), quantile(pc, 0.5), quantile(pg, 0.5));
    i = j;
  }
  return x;
}

// The avoidable bytes without a measured copy of their own, at the analysis's copy rate.
void price_avoidable(Analysis& a) {
  for (auto& [op, s] : a.ops) {
    s.gpu_avoidable_s = s.gpu_avoidable_measured_s + s.gpu_avoidable_unmeasured_bytes / a.copy_bytes_per_s;
    s.cpu_avoidable_s = s.cpu_avoidable_bytes / a.copy_bytes_per_s;
  }
}

void sort_crossovers(Analysis& a) {
  std::sort(a.crossovers.begin(), a.crossovers.end(), [&](const Crossover& x, const Crossover& y) {
    const uint64_t tx = a.ops[x.op].time_ns, ty = a.ops[y.op].time_ns;
    return tx != ty ? tx > ty : x.op < y.op;
  });
}

}  // namespace

void PointSample::add(const Point& p) {
  ++seen_;
  if (pts_.size() < cap_) {
    pts_.push_back(p);
    return;
  }
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const uint64_t j = rng_ % seen_;
  if (j < cap_) pts_[j] = p;
}

double quantile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

OpStats Analysis::total() const {
  OpStats t;
  for (const auto& [op, s] : ops) {
    t.calls += s.calls;
    t.gpu_calls += s.gpu_calls;
    t.nested += s.nested;
    t.queries += s.queries;
    t.time_ns += s.time_ns;
    t.flops += s.flops;
    t.counted += s.counted;
    t.counted_timed += s.counted_timed;
    for (int d = 0; d < 2; ++d) {
      t.dev[d].calls += s.dev[d].calls;
      t.dev[d].ns += s.dev[d].ns;
      t.dev[d].flops += s.dev[d].flops;
    }
    t.gpu_timed_calls += s.gpu_timed_calls;
    t.copy_in_s += s.copy_in_s;
    t.compute_s += s.compute_s;
    t.copy_out_s += s.copy_out_s;
    t.gpu_wall_s += s.gpu_wall_s;
    t.bytes_in += s.bytes_in;
    t.bytes_out += s.bytes_out;
    t.gpu_walk_calls += s.gpu_walk_calls;
    t.gpu_in_bytes += s.gpu_in_bytes;
    t.gpu_avoidable_bytes += s.gpu_avoidable_bytes;
    t.gpu_avoided_bytes += s.gpu_avoided_bytes;
    t.gpu_avoidable_s += s.gpu_avoidable_s;
    t.gpu_avoidable_measured_s += s.gpu_avoidable_measured_s;
    t.gpu_avoidable_unmeasured_bytes += s.gpu_avoidable_unmeasured_bytes;
    t.cpu_walk_calls += s.cpu_walk_calls;
    t.cpu_in_bytes += s.cpu_in_bytes;
    t.cpu_avoidable_bytes += s.cpu_avoidable_bytes;
    t.cpu_avoidable_s += s.cpu_avoidable_s;
  }
  return t;
}

Analysis analyze(std::vector<std::unique_ptr<TraceReader>>& traces) {
  Analysis a;
  a.files = traces.size();
  std::map<int, std::vector<Point>> preds;
  std::map<int, uint64_t> pred_seen;
  for (auto& r : traces) add_file(a, *r, preds, pred_seen);

  double measured_bytes = 0, measured_s = 0;
  for (const auto& [op, s] : a.ops) {
    if (s.copy_in_s > 0 && s.bytes_in > 0) {
      measured_bytes += s.bytes_in;
      measured_s += s.copy_in_s;
    }
  }
  if (measured_s > 0) {
    a.copy_bytes_per_s = measured_bytes / measured_s;
    a.copy_rate_source = Analysis::kMeasured;
  }
  price_avoidable(a);

  for (auto& [op, v] : preds) a.crossovers.push_back(crossover_of(op, v, pred_seen[op]));
  a.crossover_source = "trace";
  sort_crossovers(a);
  return a;
}

bool use_profile(Analysis& a, const ProfileChoice& choice) {
  std::string* why = &a.profile_note;
  Profile p;
  if (choice.chosen) {
    p = *choice.chosen;
  } else {
    if (a.profiles.size() != 1) {
      *why = a.profiles.empty() ? "no trace names a profile" : "the traces name different profiles";
      return false;
    }
    std::string name = *a.profiles.begin();
    const std::string suffix = " (provisional)";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.resize(name.size() - suffix.size());
    if (name == "built-in") {
      p = builtin_profile();
    } else if (!choice.own_path.empty() && name == choice.own_path) {
      std::string err;
      if (!read_profile(name, &p, &err)) {
        *why = err;
        return false;
      }
    } else {
      // The name comes from the file: opening it could read a device, a FIFO or a secret.
      *why = "the traces name the profile " + name + ", which is not this machine's; pass --profile FILE to use one";
      return false;
    }
  }
  const Model model(p);
  std::vector<Crossover> xs;
  ProfileVerdict verdict;
  for (const auto& [op, sample] : a.sizes) {
    std::vector<Point> v;
    // Each sampled call stands for seen / sampled calls of its operation.
    const double weight = double(sample.seen()) / double(std::max<size_t>(1, sample.points().size()));
    for (const Point& s : sample.points()) {
      Point q;
      q.x = s.x;
      q.y = model.cpu_seconds(op, s.x);
      q.z = model.gpu_seconds(op, s.x, s.y, s.z);
      if (!(q.y > 0 && q.z > 0)) continue;
      v.push_back(q);
      if (s.device == 0 && q.z < q.y) {
        verdict.calls += weight;
        verdict.cpu_s += s.t * weight;
        verdict.pred_cpu_s += q.y * weight;
        verdict.pred_gpu_s += q.z * weight;
      }
    }
    if (!v.empty()) xs.push_back(crossover_of(op, v, a.ops[op].calls));
  }
  a.profile_verdict = verdict;
  if (xs.empty()) {
    *why = "the profile predicts none of the traced operations";
    return false;
  }
  a.crossovers = std::move(xs);
  a.crossover_source = profile_label(p);
  if (a.copy_rate_source != Analysis::kMeasured && p.h2d.bytes_per_s > 0) {
    a.copy_bytes_per_s = p.h2d.bytes_per_s;
    a.copy_rate_source = Analysis::kProfile;
    price_avoidable(a);
  }
  sort_crossovers(a);
  return true;
}

}  // namespace gofl::cli
