//! A strategy's question (`ask`, `ask-choice`, `ask-text`) in the
//! terminal: its keys, its answer sent through its ballot, and closing it
//! when the browser console beside the client (or nib) answered first.

use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::{Action, App};
use crate::agent::beside::{Said, TERMINAL};
use crate::prim::{Answer, Question};
use crate::tui::style::mask_secrets;

impl App {
    /// The answer to a strategy's question: y / n for yes or no, a digit
    /// for a choice, typed text and Enter for free text; Esc dismisses.
    pub(super) fn ask_key(&mut self, key: KeyEvent) -> Action {
        let Some(pending) = &self.ask else {
            return Action::None;
        };
        let answer = match (&pending.question, key.code) {
            (_, KeyCode::Esc) => match pending.question {
                Question::YesNo(_) => Answer::Yes(false),
                _ => Answer::Skipped,
            },
            (Question::YesNo(_), KeyCode::Char('y' | 'Y')) => Answer::Yes(true),
            (Question::YesNo(_), KeyCode::Char('n' | 'N')) => Answer::Yes(false),
            (Question::Choice(_, choices), KeyCode::Char(c)) => {
                match c
                    .to_digit(10)
                    .and_then(|d| choices.get((d as usize).wrapping_sub(1)))
                {
                    Some(choice) => Answer::Choice(choice.clone()),
                    None => return Action::None,
                }
            }
            (Question::Text(_), KeyCode::Enter) => Answer::Text(std::mem::take(&mut self.input)),
            (Question::Text(_), KeyCode::Backspace) => {
                self.input.pop();
                return Action::None;
            }
            (Question::Text(_), KeyCode::Char(c)) => {
                self.input.push(c);
                return Action::None;
            }
            _ => return Action::None,
        };
        if let Some(a) = self.ask.take() {
            let t = self.opts.theme;
            let first = first_line(a.question.text());
            let said = match &answer {
                Answer::Yes(true) => "yes".to_string(),
                Answer::Yes(false) => "no".to_string(),
                Answer::Choice(c) | Answer::Text(c) => c.clone(),
                Answer::Skipped => "(skipped)".to_string(),
            };
            self.history.push(Line::from(vec![
                Span::styled("? ", t.accent()),
                Span::styled(
                    format!("{} {}", mask_secrets(&first), mask_secrets(&said)),
                    t.dim(),
                ),
            ]));
            // Answered in the browser in the same moment: say so instead.
            if let Err(elsewhere) = a.reply.answer(Said::new(TERMINAL, &said), answer) {
                let elsewhere = a.reply.settled(Duration::from_secs(1)).unwrap_or(elsewhere);
                let line = self.history.len() - 1;
                self.history[line] = Line::from(vec![
                    Span::styled("? ", t.accent()),
                    Span::styled(
                        format!(
                            "{} {}",
                            mask_secrets(&first),
                            mask_secrets(&elsewhere.describe())
                        ),
                        t.dim(),
                    ),
                ]);
            }
        }
        Action::None
    }

    /// The open question was answered beside the client or by nib: close
    /// it, saying how.
    pub(super) fn close_ask_answered_elsewhere(&mut self) {
        let elsewhere = |s: Option<Said>| s.filter(|s| s.by != TERMINAL);
        let ask_said = self
            .ask
            .as_ref()
            .and_then(|a| elsewhere(a.reply.answered()));
        if let Some(said) = ask_said
            && let Some(a) = self.ask.take()
        {
            self.input.clear();
            let first = first_line(a.question.text());
            self.history.push(Line::from(vec![
                Span::styled("? ", self.opts.theme.accent()),
                Span::styled(
                    format!(
                        "{} {}",
                        mask_secrets(&first),
                        mask_secrets(&said.describe())
                    ),
                    self.opts.theme.dim(),
                ),
            ]));
        }
    }
}

/// A question's first line, as the history shows it once answered.
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}
