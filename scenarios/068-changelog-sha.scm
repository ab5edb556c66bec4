;; security.md 3.4: git SHAs look random but are not secrets.
(scenario "068-changelog-sha"
  (doc "a changelog entry with a commit SHA is an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("CHANGELOG.md" "# Changelog\n\n## 0.1.0\n\n- first release\n"))
  (replies
    ((fs-edit "CHANGELOG.md" "# Changelog\n" "# Changelog\n\n## 0.1.1\n\n- fix parsing of empty input (11f6ad8ec52a2984abaafd7c3b516503785c2072)\n")))
  (expect
    (decision 1 write)
    (ran 1)))
