;; security.md 5.2 #35: absolute paths outside the pin, for a read and a
;; write. /proc cannot hold new files, so the write is harmless if it ever
;; got through.
(scenario "045-absolute-path"
  (doc "absolute paths outside the workspace are denied, reads included")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n"))
  (replies
    ((fs-read "/etc/hostname"))
    ((fs-write "/proc/nib-scenario/x.txt" "x\n")))
  (expect
    (decision 1 deny)
    (refused 1)
    (decision 2 deny)
    (refused 2)))
