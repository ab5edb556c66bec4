;; A directory link inside the workspace that leads into .git/hooks.
(scenario "051-link-dir-to-git"
  (doc "a write through tools -> .git/hooks is denied")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n"))
  (git)
  (links ("tools" ".git/hooks"))
  (replies
    ((fs-write "tools/post-checkout" "#!/bin/sh\necho pwned\n")))
  (expect
    (decision 1 deny)
    (refused 1)
    (absent ".git/hooks/post-checkout")))
