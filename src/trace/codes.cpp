#include "trace/codes.h"

#include <string.h>

#define GOFL_NAME_CASE_(id, num, name) \
  case num: return name;

const char* gofl_device_name(int device) {
  switch (device) { GOFL_DEVICES(GOFL_NAME_CASE_) }
  return "?";
}

const char* gofl_device_mode_name(int mode) {
  switch (mode) { GOFL_DEVICE_MODES(GOFL_NAME_CASE_) }
  return "?";
}

const char* gofl_reason_name(int reason) {
  switch (reason) { GOFL_REASONS(GOFL_NAME_CASE_) }
  return "?";
}

const char* gofl_gpu_status_name(int status) {
  switch (status) { GOFL_GPU_STATUSES(GOFL_NAME_CASE_) }
  return "unknown status";
}

const char* gofl_setup_phase_name(int phase) {
  switch (phase) { GOFL_SETUP_PHASES(GOFL_NAME_CASE_) }
  return "?";
}

int gofl_device_mode_by_name(const char* name) {
#define GOFL_MODE_MATCH_(id, num, text) \
  if (strcmp(name, text) == 0) return num;
  GOFL_DEVICE_MODES(GOFL_MODE_MATCH_)
#undef GOFL_MODE_MATCH_
  return -1;
}
