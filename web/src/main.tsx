import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { companionFromAddress } from './core/companion';
import './styles.css';

companionFromAddress(); // #companion=…&token=… from the URL the companion printed: kept for this tab, taken off the address bar

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
