// Lessons, authored in lessons/NN-name/ as lesson.md, scenario.txt and
// questions.json, bundled at build time.
export interface Question {
  beforeLine: number;
  prompt: string;
  choices: string[];
  answer: number;
  explain: string;
}

export interface Lesson {
  id: string;
  title: string;
  text: string;
  scenario: string;
  questions: Question[];
}

const texts = import.meta.glob('../../lessons/*/lesson.md', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
const scenarios = import.meta.glob('../../lessons/*/scenario.txt', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
const questions = import.meta.glob('../../lessons/*/questions.json', { import: 'default', eager: true }) as Record<string, Question[]>;

function idOf(path: string): string {
  return path.split('/').slice(-2)[0];
}

export const LESSONS: Lesson[] = Object.keys(texts)
  .sort()
  .map((p) => {
    const id = idOf(p);
    const dir = p.slice(0, p.lastIndexOf('/'));
    const text = texts[p];
    return {
      id,
      title: /^#\s+(.*)$/m.exec(text)?.[1] ?? id,
      text: text.replace(/^#\s+.*\n/, ''),
      scenario: scenarios[`${dir}/scenario.txt`] ?? '',
      questions: questions[`${dir}/questions.json`] ?? [],
    };
  });
