/**
 * The contact details that reach one person (../patient-context.ts): e-mail addresses that are not a
 * shared mailbox, phone numbers that are not a service number, member and policy ids.
 */
import { ROLE_MAILBOXES } from '../patient-words.ts';
import { allMatches, type Span } from './spans.ts';

// Personal mailbox providers: an address there belongs to one person, never to a vendor's desk.
const FREE_MAIL =
  /^(?:gmail|googlemail|yahoo|ymail|hotmail|outlook|live|msn|icloud|me|aol|proton|protonmail|gmx|web|mail|yandex|orange|free|laposte|btinternet|sky|virginmedia|talktalk|ntlworld|libero)\./i;
const EMAIL =
  /(?<![\w.%+-])([A-Za-z0-9][\w.%+-]{0,63})@([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9][A-Za-z0-9-]{0,62}){1,8})(?![\w-])/g;
const PHONE =
  /(?<![\w.+/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?(?:\d{2,8}(?:[\s.-]\d{2,8}){1,4}|0\d{9,11})(?![\w-]|[.,]\d)/g;
// Freephone and non-geographic service numbers (UK 0800, 0808, 03xx, 084x, 087x; North American 8xx toll-free).
const SERVICE_NUMBER = /^(?:0|44)(?:80[08]|3[0347]\d|84[345]|87[01])|^1?8(?:00|88|77|66|55|44|33)/;
const MEMBER_ID =
  /(?<![\p{L}])(?:member(?:ship)?|policy|insurance|subscriber|beneficiary|medicaid|medicare)[\s_-]{0,2}(?:id|no|number|num|#)\.?[\s:#=-]{0,4}([A-Za-z0-9][A-Za-z0-9-]{3,24})/giu;

/** An e-mail address; `personal`: not a shared mailbox; `freeMail`: at a personal mailbox provider. */
export type Email = Span & { readonly local: string; readonly personal: boolean; readonly freeMail: boolean };

/** The e-mail addresses in `text`, with whether each reaches a person rather than a shared mailbox. */
export function findEmails(text: string): Email[] {
  if (!text.includes('@')) return [];
  return allMatches(EMAIL, text).map((m) => {
    const local = (m[1] ?? '').toLowerCase().replace(/\+.*$/, '');
    const personal = !ROLE_MAILBOXES.has(local) && !/^(?:no-?reply|do-?not-?reply)/.test(local);
    return {
      start: m.index,
      end: m.index + m[0].length,
      local,
      personal,
      freeMail: personal && FREE_MAIL.test(m[2] ?? ''),
    };
  });
}

/** A contact detail reaching one person; `private`: one a vendor or a service desk would not publish. */
export type Contact = Span & { readonly private: boolean };

/** Contact details that reach one person: a personal e-mail address, a non-service phone number, a member id. */
export function findContacts(text: string, emails: Email[]): Contact[] {
  const contacts: Contact[] = emails
    .filter((e) => e.personal)
    .map((e) => ({ start: e.start, end: e.end, private: e.freeMail }));
  for (const m of allMatches(PHONE, text)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length >= 9 && digits.length <= 15 && !SERVICE_NUMBER.test(digits))
      contacts.push({ start: m.index, end: m.index + m[0].length, private: false });
  }
  for (const m of allMatches(MEMBER_ID, text)) {
    if (((m[1] ?? '').match(/\d/g)?.length ?? 0) >= 4)
      contacts.push({ start: m.index, end: m.index + m[0].length, private: true });
  }
  return contacts;
}
