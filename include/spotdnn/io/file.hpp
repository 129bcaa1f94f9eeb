#pragma once
// SPDX-License-Identifier: MIT
/// @file io/file.hpp Opening and reading input files under the reader limits: regular files only (never a
/// directory, device such as /dev/zero, FIFO or socket), at most a documented size.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn {
namespace detail {

/// "a directory", "a FIFO", ...: what a non-regular file is, for messages.
inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Closes a POSIX descriptor on scope exit unless released.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace detail

namespace io {

/// The three bytes of a UTF-8 byte-order mark, which some editors put at the start of a file.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

/// An open regular file checked against `max_bytes`, and its size.
struct CheckedFile {
  int fd = -1;
  std::uintmax_t size_bytes = 0;
};

/// Opens `path` for reading; throws spotdnn::invalid_argument naming `function` and the path when it cannot
/// be opened, is not a regular file, or holds more than `max_bytes`. The open never blocks (a FIFO without a
/// writer is refused, not waited on). The caller owns the returned descriptor.
[[nodiscard]] inline CheckedFile open_checked_file(const std::string& path, std::uintmax_t max_bytes,
                                                   std::string_view function) {
  const std::string shown = detail::quoted(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    detail::fail(function, "path", shown, std::string("cannot open the file: ") + std::strerror(error));
  }
  detail::FdGuard guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    detail::fail(function, "path", shown, std::string("cannot inspect the file: ") + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    detail::fail(function, "path", shown,
                          std::string("is ") + detail::file_kind(info.st_mode) + "; give a regular file");
  }
  const auto size = std::uintmax_t(info.st_size);
  if (size > max_bytes) {
    detail::fail(function, "path", shown,
                          "the file has " + std::to_string(size) + " bytes; the maximum is " + std::to_string(max_bytes));
  }
  // Regular files ignore O_NONBLOCK for reads, but clear it so stdio sees an ordinary descriptor.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return {guard.release(), size};
}

/// The whole content of the regular file `path` (at most `max_bytes`; the format's reader decides what
/// to do with a byte-order mark). Throws spotdnn::invalid_argument as open_checked_file does, or when reading fails or the file
/// grows past `max_bytes` while it is read.
[[nodiscard]] inline std::string read_checked_file(const std::string& path, std::uintmax_t max_bytes,
                                                   std::string_view function) {
  const CheckedFile file = open_checked_file(path, max_bytes, function);
  detail::FdGuard guard(file.fd);
  std::string text;
  text.resize(std::size_t(file.size_bytes));
  std::size_t filled = 0;
  for (;;) {
    if (filled == text.size()) {
      if (text.size() >= max_bytes) {
        char probe = 0;  // a file that grew past the limit while we read it
        const ssize_t extra = ::read(file.fd, &probe, 1);
        if (extra > 0) {
          detail::fail(function, "path", detail::quoted(path),
                                "the file holds more than the maximum of " + std::to_string(max_bytes) + " bytes");
        }
        break;
      }
      text.resize(std::size_t(std::min<std::uintmax_t>(max_bytes, text.size() + 65536)));
    }
    const ssize_t got = ::read(file.fd, text.data() + filled, text.size() - filled);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      detail::fail(function, "path", detail::quoted(path),
                            std::string("cannot read the file: ") + std::strerror(error));
    }
    if (got == 0) break;
    filled += std::size_t(got);
  }
  text.resize(filled);
  return text;
}

}  // namespace io
}  // namespace spotdnn
