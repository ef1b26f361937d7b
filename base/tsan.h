#pragma once

// ThreadSanitizer annotations for hand-offs that happen inside libgrpc:
//
//   state_ = ...;                    // written before the hand-off
//   TsanRelease(this);
//   StartWrite(&message_);           // gRPC runs OnWriteDone() later
//   ...
//   void OnWriteDone(bool ok) override {
//     TsanAcquire(this);             // first thing, before reading state_
//
// Debian's gRPC is not built with ThreadSanitizer, so TSan cannot see the
// synchronization by which gRPC runs a callback (a reactor's reaction, a
// client completion callback, an alarm) after the call that started its
// operation, and reports the callback's reads of what the starting thread
// wrote as races. A release before the hand-off and an acquire at the start of
// the callback, on the same key, state that ordering. Use them only where gRPC
// guarantees it; real synchronization between our own threads uses std::mutex.
// Both compile to nothing unless COMPATD_TSAN is defined (CMake defines it for
// COMPATD_SANITIZE=thread).

#ifdef COMPATD_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace compatd::base {

inline void TsanRelease(const void* key) {
#ifdef COMPATD_TSAN
  __tsan_release(const_cast<void*>(key));
#else
  static_cast<void>(key);
#endif
}

inline void TsanAcquire(const void* key) {
#ifdef COMPATD_TSAN
  __tsan_acquire(const_cast<void*>(key));
#else
  static_cast<void>(key);
#endif
}

}  // namespace compatd::base
