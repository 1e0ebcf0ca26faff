// CBLAS's enum values as the Fortran characters they stand for: the generated wrappers describe
// CBLAS calls with them, and the backend reads CBLAS arguments with them.
#pragma once

#define GOFL_CBLAS_ROW_MAJOR 101  // CblasRowMajor: the layout, never a flag
#define GOFL_CBLAS_COL_MAJOR 102  // CblasColMajor

namespace gofl {

// CblasNoTrans.. ('N' 'T' 'C'), CblasUpper/Lower, CblasNonUnit/Unit, CblasLeft/Right. Anything else
// is '?', which fails every check, so the CPU library reports it.
inline char cblas_flag(int v) {
  switch (v) {
    case 111: return 'N';
    case 112: return 'T';
    case 113: return 'C';
    case 121: return 'U';
    case 122: return 'L';
    case 131: return 'N';
    case 132: return 'U';
    case 141: return 'L';
    case 142: return 'R';
  }
  return '?';
}

}  // namespace gofl
