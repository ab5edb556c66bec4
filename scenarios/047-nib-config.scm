;; nib's own configuration is on the denylist: a workspace may not loosen
;; its own guard.
(scenario "047-nib-config"
  (doc "a write to .nib/config.toml is denied")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("app.py" "print('hi')\n"))
  (replies
    ((fs-write ".nib/config.toml" "[guard]\nprotected = []\n")))
  (expect
    (decision 1 deny)
    (refused 1)
    (absent ".nib/config.toml")))
