// Replacement global operator new / delete for qfold-onnx and its benchmark: blocks of 1 MiB and
// more (tensor data: protobuf's strings, the folded weights) are mapped directly, 2 MiB aligned,
// with MADV_HUGEPAGE. A model's weights are hundreds of megabytes touched once; on virtual
// machines a first touch costs a page fault per 4 KiB page (about 3 ms per MiB measured on the
// CI machine kind), and transparent huge pages take one fault per 2 MiB instead. Smaller blocks
// go to malloc as usual. Not built under sanitizers, which bring their own allocator.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && defined(__linux__)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define QFOLD_ONNX_NO_HUGE_PAGES
#endif
#endif
#else
#define QFOLD_ONNX_NO_HUGE_PAGES
#endif

#if !defined(QFOLD_ONNX_NO_HUGE_PAGES)

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

namespace {

constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t threshold = std::size_t{1} << 20;

// The registry allocates with malloc and free directly: through operator new / delete, freeing
// one of its nodes under the lock would come back into big_free, and a node that malloc happens
// to place at a 2 MiB boundary would then wait for the lock it holds (a deadlock seen in the
// benchmark).
template <class T>
struct malloc_allocator {
  using value_type = T;
  malloc_allocator() = default;
  template <class U>
  malloc_allocator(const malloc_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (void* p = std::malloc(n * sizeof(T))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  friend bool operator==(const malloc_allocator&, const malloc_allocator&) noexcept { return true; }
};
struct big_blocks {
  std::mutex mutex;
  std::unordered_map<void*, std::size_t, std::hash<void*>, std::equal_to<void*>,
                     malloc_allocator<std::pair<void* const, std::size_t>>>
      sizes;
};
big_blocks& registry() {
  static big_blocks* r = new big_blocks;  // never destroyed: deletes may run after exit
  return *r;
}

void* big_alloc(std::size_t n) noexcept {
  // Rounding n up (and the extra page for alignment) must not wrap: a request near SIZE_MAX
  // would otherwise get a small block. Such a request can only fail.
  if (n > std::numeric_limits<std::size_t>::max() - 2 * huge_page) return nullptr;
  const std::size_t len = (n + huge_page - 1) / huge_page * huge_page;
  void* p =
      ::mmap(nullptr, len + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (base + huge_page - 1) & ~(huge_page - 1);
  if (aligned > base) ::munmap(p, aligned - base);
  const std::uintptr_t end = base + len + huge_page;
  if (end > aligned + len) ::munmap(reinterpret_cast<void*>(aligned + len), end - aligned - len);
  void* block = reinterpret_cast<void*>(aligned);
  ::madvise(block, len, MADV_HUGEPAGE);  // a hint: without transparent huge pages, nothing changes
  try {
    big_blocks& r = registry();
    const std::lock_guard lock(r.mutex);
    r.sizes.emplace(block, len);
  } catch (...) {
    ::munmap(block, len);
    return nullptr;
  }
  return block;
}

bool big_free(void* p) noexcept {
  if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % huge_page != 0) return false;
  big_blocks& r = registry();
  std::size_t len = 0;
  {
    const std::lock_guard lock(r.mutex);
    const auto it = r.sizes.find(p);
    if (it == r.sizes.end()) return false;
    len = it->second;
    r.sizes.erase(it);
  }
  ::munmap(p, len);
  return true;
}

void* allocate(std::size_t n) noexcept {
  if (n >= threshold)
    if (void* p = big_alloc(n)) return p;
  for (;;) {
    if (void* p = std::malloc(n != 0 ? n : 1)) return p;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) return nullptr;
    try {
      handler();
    } catch (...) {
      return nullptr;
    }
  }
}

void release(void* p) noexcept {
  if (!big_free(p)) std::free(p);
}

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }

#endif
