;; Issue 14 class 8.
(scenario "170-outside-credentials-read"
  (doc "reading a credentials file beside the workspace is a security question")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (outside (".aws/credentials" "[default]\naws_access_key_id = {{AK}}\naws_secret_access_key = {{AS}}\n"))
  (replies
    ((shell "cat ../outside/.aws/credentials > out.txt")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent "out.txt")))
