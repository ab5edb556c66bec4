;; Reading through a link that leaves the workspace is denied like any
;; path outside the pin.
(scenario "049-read-through-link-outside"
  (doc "a read through data.txt -> outside is denied")
  (channel symlinks-paths)
  (modes interactive unattended)
  (outside ("credentials" "aws_secret_access_key = {{AS}}\n"))
  (links ("data.txt" "@outside/credentials"))
  (replies
    ((fs-read "data.txt")))
  (expect
    (decision 1 deny)
    (refused 1)))
