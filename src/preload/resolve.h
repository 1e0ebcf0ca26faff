// Finding the real functions behind our exported names (see resolve.cpp for the search order; the
// lookups themselves, resolve_real and resolve_real_in, are in preload/wrapper_support.h).
#pragma once

namespace gofl {

// fork() handlers: the resolver's lock is held across fork().
void resolve_fork_prepare();
void resolve_fork_parent();
void resolve_fork_child();

// `name` as the library defining `fn` sees it: in that object's own lookup scope (itself, then its
// dependencies), never one of our wrappers; null when there is none.
void* lookup_in_scope_of(const void* fn, const char* name);

}  // namespace gofl
