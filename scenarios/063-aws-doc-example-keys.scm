;; security.md 5.2 #6: AWS's documented example keys are not credentials.
(scenario "063-aws-doc-example-keys"
  (doc "AWS's documentation example keys in docs are an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "docs/aws.md" "# AWS setup\n\n```\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n```\n")))
  (expect
    (decision 1 write)
    (ran 1)))
